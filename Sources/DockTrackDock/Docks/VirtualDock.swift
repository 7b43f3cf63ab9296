import DockTrackCore
import Foundation

/// A dock whose motors are a crop window over a wide picture (a webcam's, a recorded video's):
/// pan, tilt and zoom move and size the window, with the limits, speeds, smoothing, commands and
/// animations of the simulated motors (``SimulatedDock``), so the framing controller drives it
/// as it drives a motorized dock. What Apple calls Center Stage.
///
/// Pan and tilt are the motors' (rad, rad/s); their range follows the zoom, so that the window
/// stays inside the picture. Zoom heads for ``zoomTarget`` (set by ``ZoomFraming``, or by hand)
/// smoothly: an exponential approach with time constant ``zoomTimeConstant``, never faster than
/// ``zoomSpeed`` (in doublings per second).
package struct VirtualDock: Sendable {
    package let window: CropWindow
    package private(set) var motors: SimulatedDock
    /// The speeds and accelerations pan and tilt move at (their ranges come from the zoom).
    package let speeds: DockLimits
    package private(set) var zoom: Double
    /// Where the zoom is heading (kept within the window's range).
    package var zoomTarget: Double {
        didSet { zoomTarget = window.clampZoom(zoomTarget) }
    }
    /// Seconds the zoom takes to cover about two thirds of the way to its target.
    package var zoomTimeConstant = 0.6
    /// The fastest zoom, in doublings (or halvings) per second.
    package var zoomSpeed = 0.5
    private var zoomTime: Double

    /// A window over a picture as `window` says, pan and tilt at `speeds` (their ranges are the
    /// window's), at `zoom`, pointing at the picture's centre.
    package init(window: CropWindow, speeds: DockLimits = .standard, zoom: Double = 1, time: Double = 0) {
        self.window = window
        self.speeds = speeds
        let z = window.clampZoom(zoom)
        self.zoom = z
        zoomTarget = z
        zoomTime = time.isFinite ? time : 0
        // The motors may turn as far as the narrowest window allows; the zoom in force narrows that.
        var motors = SimulatedDock(limits: window.limits(at: window.maximumZoom, from: speeds), time: zoomTime)
        _ = try? motors.apply(.setLimits(window.limits(at: z, from: speeds)), at: zoomTime)
        self.motors = motors
    }

    /// Puts the window at `pose` and `zoom` at once, at rest: a cut, for the start of a film
    /// (where nobody has been framed yet and nothing is seen to jump).
    package mutating func place(at pose: DockOrientation, zoom: Double, time: Double) {
        let z = window.clampZoom(zoom)
        self.zoom = z
        zoomTarget = z
        zoomTime = time.isFinite ? time : zoomTime
        let limits = motors.limits
        var placed = SimulatedDock(limits: window.limits(at: window.maximumZoom, from: speeds), position: pose, time: zoomTime)
        _ = try? placed.apply(.setLimits(limits), at: zoomTime)
        motors = placed
        fitRange(at: zoomTime)
    }

    /// The part of the picture (pixels, top-left origin) the dock shows now.
    package var crop: PixelRect { window.crop(at: motors.position, zoom: zoom) }

    /// The camera the framing controller aims with now (the window at the present zoom).
    package var camera: CameraModel { window.camera(at: zoom) }

    /// Moves pan, tilt and zoom on to `time`.
    package mutating func advance(to time: Double) {
        guard time.isFinite else { return }
        if time > zoomTime {
            let dt = time - zoomTime
            let gap = log2(zoomTarget) - log2(zoom)
            let step = gap * (1 - exp(-dt / max(zoomTimeConstant, 1e-6)))
            let limit = zoomSpeed * dt
            zoom = window.clampZoom(exp2(log2(zoom) + min(max(step, -limit), limit)))
            zoomTime = time
        }
        motors.advance(to: time)
        fitRange(at: time)
    }

    /// The motors' range set to the window's at the present zoom (zooming out near an edge
    /// pulls the window in), their speeds left as they are.
    private mutating func fitRange(at time: Double) {
        let range = window.limits(at: zoom, from: speeds)
        guard range.yaw.range != motors.limits.yaw.range || range.pitch.range != motors.limits.pitch.range else { return }
        var limits = motors.limits
        limits.yaw.range = range.yaw.range
        limits.pitch.range = range.pitch.range
        _ = try? motors.apply(.setLimits(limits), at: time)
    }
}

extension VirtualDock: Dock {
    package mutating func motion(at time: Double) -> MotionState {
        advance(to: time)
        return motors.motionState
    }

    package mutating func perform(_ command: DockCommand, at time: Double) throws(DockError) {
        advance(to: time)
        try motors.apply(command, at: time)
        // A client's limits may narrow the speeds; the ranges stay the window's.
        if case .setLimits = command { fitRange(at: time) }
    }
}
