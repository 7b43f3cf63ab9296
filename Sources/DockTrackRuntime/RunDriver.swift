import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackDetection
import DockTrackMedia
import DockTrackTracking

/// The run driver: the one place where a run's frames become dock commands. Every mode (track,
/// custom tracking, simulate, the framing simulation, reframe, bench) hands it each frame's
/// recorded time and its perception; the driver paces the frame (a file before a live dock
/// plays in real time), steps the ``FrameLoop`` (the dock's pose at capture, the framing
/// controller, the command), and at the end, however the run ends, stops the dock
/// (``RunEnd``), closes the outputs and stops the parts the run started, in the reverse order
/// of their start (as swift-service-lifecycle's ServiceGroup does).
///
/// A frame's way from capture to command, in order: ``step(recordedAt:perceive:)`` waits for
/// the frame's time when paced, asks the dock where it pointed then, `perceive` sees the frame
/// from that pose, the controller aims, the dock is sent the command. What a mode does with the
/// step (states files, clients, pictures) is its own.
///
/// ``forEachFrame(of:stopping:_:)`` hands out the frames themselves (``RunFrames``: a source's
/// selected frames, or a file's decoded and detected ahead) until they end or the caller's
/// `stopping` says so. The driver never decides when to stop: an executable passes its
/// signals'; the library reads none.
public struct RunDriver<F: Framer, D: Dock> {
    public var loop: FrameLoop<F, D>
    /// Frames wait for their time on this pacer (a file before a live dock); `nil`: each frame is
    /// captured at its recorded time, as fast as it comes.
    private var pacer: RealTimePacer?
    /// The live dock's clock: the last stop is sent at its present time; `nil`: at the last
    /// frame's capture time (a simulated dock on the frames' clock).
    private let dockClock: (@Sendable () -> Double)?
    /// The capture time of the last frame stepped (0 before the first).
    public private(set) var lastCaptured = 0.0
    /// What the run started (a detection thread, a camera, a server), stopped at its end in the
    /// reverse order.
    private var parts: [(name: String, stop: () -> Void)] = []
    /// Whether ``end(closing:)`` ran.
    public private(set) var ended = false

    /// `pacer`: frames played in real time on it; `dockClock`: the clock of a live dock.
    public init(loop: FrameLoop<F, D>, pacer: RealTimePacer? = nil, dockClock: (@Sendable () -> Double)? = nil) {
        self.loop = loop
        self.pacer = pacer
        self.dockClock = dockClock
    }

    /// One frame recorded at `time`: waited for when paced, then stepped. `perceive` gets the
    /// time the frame was captured (its recorded time, or later when paced) and the pose the
    /// camera looked from, and returns the subjects it sees, ranked.
    public mutating func step(recordedAt time: Double,
                              perceive: (_ captured: Double, _ pose: DockOrientation) throws -> [TrackedSubject]) throws -> FrameStep {
        let captured = captureTime(recordedAt: time)
        return try step(capturedAt: captured) { pose in try perceive(captured, pose) }
    }

    /// The time a frame recorded at `time` is captured at (paced: waits for it), without a step:
    /// for a mode that needs the time before its perception (its clients' requests, first).
    public mutating func captureTime(recordedAt time: Double) -> Double {
        let captured = pacer?.wait(for: time) ?? time
        lastCaptured = captured
        return captured
    }

    /// Steps a frame already captured at `captured` (``captureTime(recordedAt:)``): the one call
    /// of ``FrameLoop/step(capturedAt:perceive:)`` in the library.
    public mutating func step(capturedAt captured: Double, perceive: (_ pose: DockOrientation) throws -> [TrackedSubject]) throws -> FrameStep {
        lastCaptured = captured
        return try loop.step(capturedAt: captured, perceive: perceive)
    }

    /// Records a part the run started, to be stopped at its end (after the dock, before the
    /// parts started before it).
    public mutating func own(_ name: String, stop: @escaping () -> Void) {
        parts.append((name, stop))
    }

    /// Ends the run, whatever ends it: the dock told to stop at the run's last time on its clock
    /// and given time to settle (``RunEnd``), then `closing` (the outputs), then the parts in
    /// reverse order. Again is harmless.
    public mutating func end(closing: () -> Void = {}) {
        guard !ended else { return }
        ended = true
        RunEnd.end(&loop.dock, at: dockClock?() ?? lastCaptured, closing: closing)
        stopParts()
    }

    /// Stops the parts the run started, the last started first, without touching the dock (a
    /// run that never stepped: its owner closed before it ran). Again is harmless.
    public mutating func stopParts() {
        while let part = parts.popLast() { part.stop() }
    }
}

/// Where a run's frames come from.
package enum RunFrames {
    /// The selected frames of a source, read one after the other (a camera, a stream, a file
    /// whose detection runs on the frame thread).
    case source(any FrameSource, FrameSelection)
    /// A file's frames decoded and detected ahead, on threads of their own (``DetectionAhead``).
    case ahead(DetectionAhead)

    /// One frame as the run takes it: with the detections made ahead for it when they were.
    package struct Item {
        package var frame: Frame
        /// Whether the frame came from ``RunFrames/ahead(_:)``: `detected` is then what was
        /// found on it (`nil`: no detector looked at it); from a source, the pipeline detects.
        package var ahead: Bool
        package var detected: [Observation]?
        /// When the frame was decoded (monotonic seconds): its latency counts from then.
        package var decoded: Double
        /// Whether a cut in the film leads into the frame (found by the detection ahead when it
        /// was given a ``ShotBoundary``; always false from a source).
        package var startsShot = false

        /// The subjects `pipeline` sees in the frame (detecting itself for a frame read from a
        /// source, taking the detections made ahead otherwise).
        package func subjects(by pipeline: TrackingPipeline) throws(DetectorError) -> [TrackedSubject] {
            ahead ? try pipeline.process(frame, detected: detected, startsShot: startsShot) : try pipeline.process(frame)
        }
    }

    /// Stops the threads of frames detected ahead (a source is its owner's to stop).
    package func stop() {
        if case .ahead(let detecting) = self { detecting.stop() }
    }
}

extension RunFrames {
    /// Hands each frame to `body` until the frames end, `stopping` says so (asked before each
    /// frame) or `body` returns false: the one loop over a run's frames (``RunDriver`` and the
    /// runs whose dock is a crop window, ``Reframer``'s, go through it).
    package mutating func forEach(stopping: () -> Bool, _ body: (Item) throws -> Bool) throws {
        switch self {
        case .ahead(let detecting):
            while !stopping(), let (frame, detected, decoded, startsShot) = try detecting.nextWithCut() {
                guard try body(Item(frame: frame, ahead: true, detected: detected, decoded: decoded, startsShot: startsShot)) else { return }
            }
        case .source(var source, let selection):
            defer { self = .source(source, selection) }
            var going = true
            try selection.forEachFrame(of: &source) { frame in
                going = try body(Item(frame: frame, ahead: false, detected: nil, decoded: MonotonicClock.now()))
            } stopping: { !going || stopping() }
        }
    }
}

extension RunDriver {
    /// Hands each frame of `frames` to `body`, with the driver to step it with, until the frames
    /// end, `stopping` says so (asked before each frame) or `body` returns false.
    package mutating func forEachFrame(of frames: inout RunFrames, stopping: () -> Bool,
                                       _ body: (inout Self, RunFrames.Item) throws -> Bool) throws {
        try frames.forEach(stopping: stopping) { item in try body(&self, item) }
    }
}
