import DockTrackCore
import DockTrackFraming
import DockTrackDock
import DockTrackMedia
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
/// (``push(_:subjects:)``), the last N at ``finish()``. A subject found before the first frame
/// comes out is cut to; after, the window pans.
public struct Reframer {
    /// One frame as it is shown.
    public struct Shot {
        public var frame: Frame
        /// The part of the frame shown (pixels, top-left origin).
        public var crop: PixelRect
        /// The frame's subjects in unit coordinates of the shown part (lower-left origin).
        public var subjects: [TrackedSubject]
        /// The same in unit coordinates of the whole frame.
        public var wholeFrameSubjects: [TrackedSubject]
        public var zoom: Double
    }

    public private(set) var loop: FrameLoop<FramingController, VirtualDock>
    public var zoomFraming: ZoomFraming?
    public let lookAhead: Int
    public var window: CropWindow { loop.dock.window }
    /// Frames waiting for their window, with their subjects (unit coordinates of the whole frame).
    private var pending: [(frame: Frame, subjects: [TrackedSubject])] = []
    /// The window and zoom the dock reached at the last frame.
    private var latest: (crop: PixelRect, zoom: Double)?
    /// Whether anyone has been framed yet: the first subject is cut to, not panned to (the
    /// frames before show nobody worth following).
    private var framedAnyone = false
    /// Whether a frame has come out yet.
    private var shownAny = false

    /// `framing`'s mode, region of interest and speed limits frame through `dock`; its camera and
    /// ranges are the window's. `zoom` `nil`: the zoom stays as the dock has it.
    public init(dock: VirtualDock, framing: FramingController.Params, zoom: ZoomFraming? = ZoomFraming(), lookAhead: Int = 0,
                trace: LineOutput? = nil) throws {
        var params = framing
        params.camera = dock.camera
        params.limits = dock.window.limits(at: dock.zoom, from: dock.speeds)
        params.home = .zero
        loop = try FrameLoop(controller: FramingController(params: params), dock: dock, cameraOnDock: true, trace: trace)
        zoomFraming = zoom
        self.lookAhead = max(0, lookAhead)
    }

    /// Takes the next frame and its subjects (ranked, unit coordinates of the whole frame);
    /// returns the frame `lookAhead` frames back once its window is known.
    public mutating func push(_ frame: Frame, subjects: [TrackedSubject]) throws -> Shot? {
        let time = frame.time
        loop.dock.advance(to: time)
        let zoom = loop.dock.zoom
        let window = self.window
        loop.controller.params.camera = window.camera(at: zoom)
        loop.controller.params.limits = window.limits(at: zoom, from: loop.controller.params.limits)
        _ = try loop.step(capturedAt: time) { pose in
            let crop = window.crop(at: pose, zoom: zoom)
            return subjects.map { Self.seen($0, through: crop, in: window) }
        }
        if var zoomFraming {
            loop.dock.zoomTarget = zoomFraming.update(subjects: subjects, mode: loop.controller.params.mode, window: window,
                                                      current: zoom, now: time)
            self.zoomFraming = zoomFraming
        }
        // The first subject is cut to while no frame has been shown yet; later, the window pans.
        if !framedAnyone, loop.controller.state == .tracking, let target = loop.controller.target {
            if !shownAny { loop.dock.place(at: target, zoom: loop.dock.zoomTarget, time: time) }
            framedAnyone = true
        }
        latest = (loop.dock.crop, loop.dock.zoom)
        pending.append((frame, subjects))
        guard pending.count > lookAhead else { return nil }
        shownAny = true
        return shot(pending.removeFirst())
    }

    /// The frames still waiting, shown through the last window.
    public mutating func finish() -> [Shot] {
        defer { pending.removeAll() }
        return pending.map(shot)
    }

    private func shot(_ item: (frame: Frame, subjects: [TrackedSubject])) -> Shot {
        let (crop, zoom) = latest ?? (window.crop(at: .zero, zoom: 1), 1)
        return Shot(frame: item.frame, crop: crop, subjects: item.subjects.map { Self.seen($0, through: crop, in: window) },
                    wholeFrameSubjects: item.subjects, zoom: zoom)
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
