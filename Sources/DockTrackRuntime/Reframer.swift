import DockTrackCore
import DockTrackFraming
import DockTrackDock
import DockTrackMedia
import DockTrackDetection
import DockTrackTracking
import DockTrackSystem
import Foundation

/// The frame loop of a ``VirtualDock``: the subjects of each whole picture (tracked in it, so
/// people outside the window count too) go to the framing controller as the window sees them,
/// the controller pans and tilts the window, ``ZoomFraming`` sizes it; each frame comes out with
/// the window it is shown through.
///
/// With a look-ahead of N frames a frame is shown through the window the dock reached N frames
/// later: the dock's lag behind a moving subject is taken back, with nothing known beyond the
/// frame in hand plus those N. Frames therefore come out N frames after they go in
/// (``push(_:subjects:)``), the last N at ``finish()``.
///
/// Cuts: at a cut in the film (the picture changes at once: ``ShotBoundary``) and at the start,
/// the window cuts too, to the first subject seen in the new shot, when that is found before the
/// cut's frame comes out; no frame is shown through a window reached after a cut that comes later.
/// Between cuts the window only pans and zooms, within its speed limits.
package struct Reframer {
    /// One frame as it is shown.
    package struct Shot {
        package var frame: Frame
        /// The part of the frame shown (pixels, top-left origin).
        package var crop: PixelRect
        /// The frame's subjects in unit coordinates of the shown part (lower-left origin).
        package var subjects: [TrackedSubject]
        /// The same in unit coordinates of the whole frame.
        package var wholeFrameSubjects: [TrackedSubject]
        package var zoom: Double
    }

    /// A frame waiting to come out: its subjects (unit coordinates of the whole frame), whether a
    /// cut leads into it, and the window the dock reached at it.
    private struct Waiting {
        var frame: Frame
        var subjects: [TrackedSubject]
        var isCut: Bool
        var sequence: Int
        var reached: (crop: PixelRect, zoom: Double)
    }

    /// The run driver over the window's dock (a virtual dock on the frames' clock).
    package private(set) var driver: RunDriver<FramingController, VirtualDock>
    package var zoomFraming: ZoomFraming?
    package let lookAhead: Int
    package var window: CropWindow { driver.loop.dock.window }
    /// Finds the film's cuts, for frames pushed without knowing whether a cut leads into them.
    package var shotBoundary = ShotBoundary()
    private var pending: [Waiting] = []
    private var pushed = 0
    /// The cut (frame sequence number; 0: the start) whose window is not chosen yet.
    private var openCut: Int? = 0
    /// Cuts found so far.
    package private(set) var cuts = 0

    /// `framing`'s mode, region of interest and speed limits frame through `dock`; its camera and
    /// ranges are the window's. `zoom` `nil`: the zoom stays as the dock has it.
    package init(dock: VirtualDock, framing: FramingController.Params, zoom: ZoomFraming? = ZoomFraming(), lookAhead: Int = 0,
                trace: LineOutput? = nil) throws {
        var params = framing
        params.camera = dock.camera
        params.limits = dock.window.limits(at: dock.zoom, from: dock.speeds)
        params.home = .zero
        driver = RunDriver(loop: try FrameLoop(controller: FramingController(params: params), dock: dock, cameraOnDock: true, trace: trace))
        zoomFraming = zoom
        self.lookAhead = max(0, lookAhead)
    }

    /// Takes the next frame and its subjects (ranked, unit coordinates of the whole frame);
    /// returns the frame `lookAhead` frames back once its window is known. `startsShot`: whether
    /// a cut leads into the frame, when that was found already (``DetectionAhead`` finds the cuts
    /// as it reads); `nil`: ``shotBoundary`` looks.
    package mutating func push(_ frame: Frame, subjects: [TrackedSubject], startsShot: Bool? = nil) throws -> Shot? {
        let time = frame.time
        let isCut = startsShot ?? shotBoundary.startsShot(frame.image)
        if isCut {
            cuts += 1
            openCut = pushed
        }
        driver.loop.dock.advance(to: time)
        let zoom = driver.loop.dock.zoom
        let window = self.window
        driver.loop.controller.params.camera = window.camera(at: zoom)
        driver.loop.controller.params.limits = window.limits(at: zoom, from: driver.loop.controller.params.limits)
        _ = try driver.step(recordedAt: time) { _, pose in
            let crop = window.crop(at: pose, zoom: zoom)
            return subjects.map { Self.seen($0, through: crop, in: window) }
        }
        if var zoomFraming {
            driver.loop.dock.zoomTarget = zoomFraming.update(subjects: subjects, mode: driver.loop.controller.params.mode, window: window,
                                                      current: zoom, now: time)
            self.zoomFraming = zoomFraming
        }
        pending.append(Waiting(frame: frame, subjects: subjects, isCut: isCut, sequence: pushed, reached: (driver.loop.dock.crop, driver.loop.dock.zoom)))
        pushed += 1
        // The first subject seen in this shot: cut to it while the shot's first frame still waits.
        let seen = subjects.min { ($0.saliencyRank ?? .max) < ($1.saliencyRank ?? .max) }?.isObserved ?? false
        if let cut = openCut, seen, driver.loop.controller.state == .tracking, let aim = driver.loop.controller.aim(at: subjects) {
            if let first = pending.first, first.sequence <= cut {
                // Where the controller would bring the subject, in the window's own geometry.
                let zoom = driver.loop.dock.zoomTarget
                driver.loop.dock.place(at: window.pose(showing: aim.subject, at: aim.target, zoom: zoom), zoom: zoom, time: time)
                // A new shot: the controller starts afresh (no speed or integral carried over).
                driver.loop.controller = FramingController(params: driver.loop.controller.params)
                let placed = (driver.loop.dock.crop, driver.loop.dock.zoom)
                for i in pending.indices where pending[i].sequence >= cut { pending[i].reached = placed }
            }
            openCut = nil
        }
        guard pending.count > lookAhead else { return nil }
        return shot(ofFirstOf: pending.count)
    }

    /// Records a part the run started (a source, a detection thread, an output), stopped at
    /// ``end()``, the last started first (the driver's parts).
    package mutating func own(_ name: String, stop: @escaping () -> Void) {
        driver.own(name, stop: stop)
    }

    /// Ends the run: the window told to stop, then the parts stopped. Again is harmless.
    package mutating func end() {
        driver.end()
    }

    /// The frames still waiting, each through the last window reached before the next cut.
    package mutating func finish() -> [Shot] {
        var shots: [Shot] = []
        while !pending.isEmpty { shots.append(shot(ofFirstOf: pending.count)) }
        return shots
    }

    /// The first waiting frame, shown through the window reached `count - 1` frames later, or at
    /// the last frame before a cut that comes sooner; removed from the waiting.
    private mutating func shot(ofFirstOf count: Int) -> Shot {
        let first = pending.removeFirst()
        var reached = first.reached
        for next in pending.prefix(count - 1) {
            if next.isCut { break }
            reached = next.reached
        }
        let window = self.window
        return Shot(frame: first.frame, crop: reached.crop, subjects: first.subjects.map { Self.seen($0, through: reached.crop, in: window) },
                    wholeFrameSubjects: first.subjects, zoom: reached.zoom)
    }

    /// `subject` (unit coordinates of the whole frame) as seen through `crop`.
    static func seen(_ subject: TrackedSubject, through crop: PixelRect, in window: CropWindow) -> TrackedSubject {
        var seen = subject
        seen.rect = window.rect(subject.rect, in: crop)
        seen.faceRect = subject.faceRect.map { window.rect($0, in: crop) }
        if let body = subject.bodyRect { seen.bodyRect = window.rect(body, in: crop) }
        return seen
    }
}
