import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import Foundation

/// Calibration with the real things (`docktrack calibrate`): the dock is sent to each pose,
/// waited for until its own motion states say it is there and still, given `settle` seconds
/// more (a camera's exposure, a stream's delay), and then the newest frame of each camera is
/// taken.
package struct DockCalibrationRig: CalibrationRig {
    package var dock: AnyDock
    package var dockCamera: any FrameSource
    package var overview: any FrameSource
    package var clock: @Sendable () -> Double
    package var settle: Double
    /// The longest wait for the dock to reach a pose.
    package var reachTimeout = 15.0
    /// Asked while waiting: true ends the calibration (Ctrl-C).
    package var stopping: @Sendable () -> Bool = { false }

    package init(dock: AnyDock, dockCamera: any FrameSource, overview: any FrameSource, clock: @escaping @Sendable () -> Double, settle: Double) {
        self.dock = dock
        self.dockCamera = dockCamera
        self.overview = overview
        self.clock = clock
        self.settle = settle
    }

    package mutating func look(at pose: DockOrientation) throws -> (dockView: Image, overview: Image) {
        try move(to: pose)
        Thread.sleep(forTimeInterval: settle)
        return (try newest(&dockCamera, "the dock's camera"), try newest(&overview, "the overview camera"))
    }

    /// Sends the dock to `pose` and waits until its motion states say it is there (within a
    /// quarter of a degree) and still (under a degree a second).
    package mutating func move(to pose: DockOrientation) throws {
        let started = clock()
        try dock.perform(.setOrientation(pose, duration: 0, relative: false), at: started)
        while true {
            guard !stopping() else { throw OverviewCalibration.Failure(description: "calibration stopped") }
            let motion = try dock.motion(at: clock())
            let off = hypot(motion.position.x - pose.x, motion.position.y - pose.y)
            let speed = hypot(motion.velocity.x, motion.velocity.y)
            if off < 0.25 * .pi / 180 && speed < .pi / 180 { return }
            guard clock() - started < reachTimeout else {
                throw OverviewCalibration.Failure(description: String(
                    format: "the dock did not reach pitch %.1f°, yaw %.1f° within %.0f s (it is at %.1f°, %.1f°): are the poses within its limits?",
                    pose.x * 180 / .pi, pose.y * 180 / .pi, reachTimeout, motion.position.x * 180 / .pi, motion.position.y * 180 / .pi))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// A frame taken after this call began: a live source hands out its newest frame, read
    /// twice so that one captured before the dock stopped is passed over.
    private func newest(_ source: inout any FrameSource, _ name: String) throws -> Image {
        var last: Frame?
        for _ in 0..<(source is any LiveFrameSource ? 2 : 1) {
            guard let frame = try source.nextFrame() else { break }
            last = frame
        }
        guard let last else { throw OverviewCalibration.Failure(description: "\(name) gave no picture") }
        return last.image
    }
}
