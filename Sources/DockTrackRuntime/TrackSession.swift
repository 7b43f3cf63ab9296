import DockTrackAudio
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking
import Foundation

/// `track` over a camera, a stream or a file, as the library runs it: each frame perceived by
/// the pipeline, framed by the loop and sent to its dock, published to a control server, written
/// to the outputs; the dock told to stop at every end. Made from parts opened already (the
/// command line opens them from its options); owns them from then on: ``close()`` (or the end
/// of ``run(stopping:onFrame:)``) stops the detection thread, the live source and the server.
public final class TrackSession {
    /// Where a run's results go besides the dock.
    public struct Outputs {
        /// Subject states, a JSON line per frame.
        package var states: LineOutput?
        /// The input with the subjects and the framing drawn on it.
        package var video: AnnotatedOutput?
        /// The same picture shown live; closing it ends the run.
        package var window: PreviewWindow?

        package init(states: LineOutput? = nil, video: AnnotatedOutput? = nil, window: PreviewWindow? = nil) {
            self.states = states
            self.video = video
            self.window = window
        }
    }

    /// What a run did.
    public struct Summary: Sendable {
        public var frames: Int
        public var seconds: Double
        /// A live run's latencies and passed-over frames.
        public var live: String?
        /// The dock's command-to-motion latency, for a live dock.
        public var commandLatency: Double?
        /// Frames the detection thread detected and passed over, when it ran.
        public var detectionThread: (detected: Int, replaced: Int)?
        /// Whether the preview window was closed (the run ended there).
        public var windowClosed = false
        /// Frames of the overview camera tracked, and passed over (a recording kept in step).
        public var overviewFrames: (tracked: Int, passedOver: Int)?

        /// What `--summary` prints: frames and rate, a live run's latencies, the dock's latency,
        /// the detection thread.
        public var lines: [String] {
            var lines = [String(format: "%d frames, %.2f s, %.1f frames per second", frames, seconds, Double(frames) / max(seconds, 1e-9))]
            if let live { lines.append(live) }
            if let commandLatency {
                lines.append(String(format: "the dock's command-to-motion latency: %.0f ms, as measured from its motion states", commandLatency * 1000))
            }
            if let (detected, replaced) = detectionThread {
                lines.append("detection thread: \(detected) frames detected, \(replaced) passed over for newer ones")
            }
            if let (tracked, passedOver) = overviewFrames {
                lines.append("overview: \(tracked) frames tracked (" + String(format: "%.1f", Double(tracked) / max(seconds, 1e-9)) + " per second)"
                             + (passedOver > 0 ? ", \(passedOver) passed over to keep in step" : ""))
            }
            return lines
        }
    }

    public private(set) var source: any FrameSource
    public let pipeline: TrackingPipeline
    /// The run driver: frames paced, stepped through the frame loop, the dock stopped at the end.
    package private(set) var driver: RunDriver<FramingController, AnyDock>
    /// The frame loop (its controller, its dock).
    public var loop: FrameLoop<FramingController, AnyDock> { driver.loop }
    package let server: TrackControlServer?
    /// The run's control path: the `--serve` server's, or one for a control page alone.
    package let control: TrackControl?
    /// A page watching the run (``FrameViewer``): while it watches, each frame is drawn for it.
    /// Given with ``show(on:)``: the run owns it from then on.
    public private(set) var viewer: (any FrameViewer)?
    public let outputs: Outputs
    /// What the run did so far (complete once ``run(stopping:onFrame:)`` returns or throws).
    public private(set) var summary = Summary(frames: 0, seconds: 0)
    let selection: FrameSelection
    let liveRun: LiveRun?
    /// Boxes to follow as objects from the first frame (unit coordinates, lower-left origin).
    let objects: [UnitRect]
    /// Zoom as part of framing, for a dock whose camera zooms.
    var cameraZoom: CameraZoomFraming?
    /// Whether the dock is live (commands take effect as they are sent, on `clock`).
    let liveDock: Bool
    /// The frame clock of a live dock: a camera's capture clock, or a file played in real time.
    let clock: SleepingClock
    private var closed = false
    /// A client's own observations (`track --serve`'s `track` request), tracked from frame to frame.
    private let customTracking = TrackingPipeline(detector: nil, cues: nil)
    /// What a person watching the run is told (the dock taken off and put back).
    let notes: (@Sendable (String) -> Void)?
    /// PipeWire's audio route, followed while the session runs.
    let audioRoutes: PipeWireRouteWatcher?
    /// A fixed overview camera that sends the dock to people its own camera does not see.
    var overview: OverviewRun?

    /// `clockOrigin`: the monotonic time the dock's clock counts from (a camera's capture clock).
    package init(source: any FrameSource, pipeline: TrackingPipeline, loop: FrameLoop<FramingController, AnyDock>,
                selection: FrameSelection, liveRun: LiveRun?, liveDock: Bool, clockOrigin: Double,
                server: TrackControlServer? = nil, control: TrackControl? = nil, outputs: Outputs = Outputs(), objects: [UnitRect] = [],
                cameraZoom: CameraZoomFraming? = nil, notes: (@Sendable (String) -> Void)? = nil,
                audioRoutes: PipeWireRouteWatcher? = nil, overview: OverviewRun? = nil) {
        self.source = source
        self.pipeline = pipeline
        self.selection = selection
        self.liveRun = liveRun
        self.liveDock = liveDock
        let clock = SleepingClock(now: { MonotonicClock.now() - clockOrigin }, sleep: SleepingClock.monotonic.sleep)
        self.clock = clock
        // A file before a live dock plays in real time (a late frame goes at once); the last stop
        // goes at the live dock's present time.
        driver = RunDriver(loop: loop, pacer: liveDock && liveRun == nil ? RealTimePacer(clock: clock) : nil,
                           dockClock: liveDock ? clock.now : nil)
        self.server = server
        self.control = server?.control ?? control
        self.outputs = outputs
        self.objects = objects
        self.cameraZoom = cameraZoom
        self.notes = notes
        self.audioRoutes = audioRoutes
        self.overview = overview
        // What the session was given running, in the order it started (each is stopped in the
        // reverse order when the run ends): the control server, the audio route watch, the live
        // source, the overview camera's watch, the detection thread.
        if let server { driver.own("control server", stop: server.stop) }
        if let audioRoutes { driver.own("audio route watch", stop: audioRoutes.stop) }
        if let live = source as? any LiveFrameSource { driver.own("live source", stop: live.stop) }
        if let watch = overview?.watch { driver.own("overview watch", stop: watch.stop) }
        driver.own("detection and hands threads") { [pipeline] in pipeline.stopThreads() }
        // A client may say hello before the first frame: the dock's capabilities are known now,
        // and whether gestures are watched.
        self.control?.watchesGestures = pipeline.watchesGestures
        driver.loop.dock.relayNews(to: self.control, notes: notes)
    }

    deinit { close() }

    /// Seconds a gesture stays drawn on the annotated picture.
    static let gestureShownFor = 1.5

    /// Stops what the session owns, in the reverse order of their start (``RunDriver``'s
    /// parts): a page watching, the detection thread, the overview's watch, the live source,
    /// the audio route watch, the control server. Again is harmless.
    public func close() {
        guard !closed else { return }
        closed = true
        driver.stopParts()
    }

    /// Shows the run on `viewer` (a control page), which the run owns from now on: stopped
    /// (and waited for) when the run ends, before the control path it serves.
    public func show(on viewer: any FrameViewer) {
        self.viewer = viewer
        driver.own("page") { viewer.stop() }
    }

    /// Runs to the end of the input, a live run's end, `stopping` (asked between frames) or the
    /// preview window's closing; the dock is left still however it ends (an error included, which
    /// is thrown after). `onFrame` is told the frames done so far.
    public func run(stopping: @escaping () -> Bool,
                    onFrame: (Int) -> Void = { _ in }) throws -> Summary {
        defer { close() }
        let started = MonotonicClock.now()
        summary = Summary(frames: 0, seconds: 0)
        var objectsStarted = objects.isEmpty
        // The limits the zoom narrows (its ranges, their speeds): the run's, then a client's own
        // once it sets them (setLimits through --serve).
        var framingLimits = driver.loop.controller.params.limits
        let zooming = driver.loop.dock.zooming
        // Each frame's result goes to the states file and the control clients, then (the
        // frame's latency taken) to the picture.
        var recordSinks: [any FrameSink] = []
        if let control { recordSinks.append(ControlSink(control: control)) }
        if let states = outputs.states { recordSinks.append(StatesFileSink(file: states)) }
        // Gestures stay on the picture for a moment after they are recognized.
        var shownGestures: [GestureEvent] = []
        var pictureDelay = 0.0
        var pictures = PictureSink(video: outputs.video, window: outputs.window, viewer: { [weak self] in self?.viewer })
        // One frame, stepped by `driver` (the run's, lent for the frame): from its capture to the
        // dock's command, then to the sinks.
        func emit(_ item: RunFrames.Item, _ driver: inout RunDriver<FramingController, AnyDock>) throws -> Bool {
            let frame = item.frame
            if !objectsStarted {
                for box in objects { _ = try pipeline.track(objectAt: box, in: frame) }
                objectsStarted = true
            }
            let captured = driver.captureTime(recordedAt: frame.time)
            let began = MonotonicClock.now()
            driver.loop.dock.relayNews(to: control, notes: notes)
            if let control {
                let changes = control.changes(for: &driver.loop, pipeline: pipeline, customTracking: customTracking, at: captured)
                driver.loop.merge(changes, at: captured, overview: overview.map { _ in { [unowned self] in self.selectInOverview($0) } })
                if let limits = changes.clientLimits { framingLimits = limits }
                if changes.choseInDockPicture { overview?.guide.forgetChoice() }
            }
            if let zoom = cameraZoom, let zooming {
                // The controller aims with the camera at the zoom in force, within the turns it allows.
                driver.loop.controller.params.camera = zoom.camera(at: zooming.magnification)
                driver.loop.controller.params.limits = zoom.limits(at: zooming.magnification, from: framingLimits)
            }
            overview?.watch.advance(to: frame.time)
            var guided: OverviewGuide.Use?
            let step = try driver.step(capturedAt: captured) { pose in
                let seen = try item.subjects(by: pipeline)
                guard let overview = self.overview else { return seen }
                let (subjects, use) = self.guideByOverview(overview, seen: seen, in: frame.image, from: pose, at: captured)
                guided = use
                return subjects
            }
            if let delay = driver.loop.pictureDelay?.seconds, delay != pictureDelay {
                pictureDelay = delay
                notes?(String(format: "the camera's pictures are taken %.1f s before they arrive (measured against the dock's motion): each is framed from where the dock pointed then", delay))
            }
            if var zoom = cameraZoom, let zooming {
                if let wanted = zoom.request(subjects: step.subjects, mode: driver.loop.controller.params.mode,
                                             magnification: zooming.magnification, now: captured) {
                    try zooming.zoom(toMagnification: wanted)
                }
                cameraZoom = zoom
            }
            let gestures = pipeline.takeGestures()
            shownGestures = shownGestures.filter { frame.time - $0.time >= 0 && frame.time - $0.time <= Self.gestureShownFor } + gestures
            for gesture in gestures {
                control?.announce(gesture)
                notes?(String(format: "gesture at %.2f s: %@ by %@", gesture.time, gesture.kind.rawValue, gesture.subject.uuidString))
            }
            let record = SubjectStatesRecord(frame: frame.index, time: frame.time, subjects: step.subjects, gestures: gestures)
            let params = driver.loop.controller.params
            let result = FrameResult(
                frame: frame, step: step, record: record,
                annotation: FrameAnnotation(
                    subjects: step.subjects, regionOfInterest: params.regionOfInterest, target: step.aim?.target,
                    pose: step.atCommand.position - params.home,
                    state: !driver.loop.systemTracking ? (driver.loop.customSubjects == nil ? "tracking off" : "custom tracking")
                        : guided == .overview ? "sent by the overview" : step.state.rawValue,
                    gestures: shownGestures))
            for index in recordSinks.indices { _ = try recordSinks[index].take(result) }
            let latency = liveRun?.finished(frame) ?? (MonotonicClock.now() - began)
            control?.recordFrame(latency: latency)
            summary.frames += 1
            onFrame(summary.frames)
            guard try pictures.take(result) else {
                summary.windowClosed = true
                return false
            }
            return true
        }
        func finish() {
            answerTapsLeft()
            driver.end { outputs.video?.close() }
            summary.seconds = MonotonicClock.now() - started
            summary.live = liveRun?.summary
            summary.commandLatency = liveDock ? driver.loop.dock.commandLatency : nil
            summary.detectionThread = pipeline.worker.map { ($0.detectedFrames, $0.replacedFrames) }
            summary.overviewFrames = overview?.watch.frames
        }
        do {
            // A file: decoding and detection run on threads of their own, ahead of the tracker.
            let ahead = liveRun == nil && source.info.kind == .video && !pipeline.params.adaptiveDetection && !pipeline.params.asyncDetection
            var frames: RunFrames = ahead ? .ahead(pipeline.detectingAhead(of: source, selection: selection)) : .source(source, selection)
            defer {
                frames.stop()
                if case .source(let read, _) = frames { source = read }
            }
            let liveRun = liveRun
            try driver.forEachFrame(of: &frames, stopping: { liveRun?.shouldStop == true || stopping() }) { driver, item in
                try emit(item, &driver)
            }
        } catch {
            finish()
            throw error
        }
        finish()
        return summary
    }
}

extension TrackSession {
    /// A person chosen in the overview's picture: looked up after the overview's people are
    /// next joined to the dock camera's (this frame's ``guideByOverview``), so that the answer
    /// names the dock's own subject even for someone who came into both pictures a moment ago;
    /// followed from the next frame on.
    func selectInOverview(_ selection: OverviewSelection) {
        guard overview?.watch.latest != nil else {
            selection.answered(.failure(.noSubjectFound))
            return
        }
        // Its last picture is history: the people in it have moved on.
        if let ended = overview?.watch.ended {
            selection.answered(.failure(Self.tapAfter(ended)))
            return
        }
        overview?.taps.append(selection)
    }

    /// Answers the taps waiting (``selectInOverview(_:)``) from `overview`'s people as `run`'s
    /// guide joined them last; `nil`: the overview has nobody to give (it ended), nobody is chosen.
    private func answerTaps(of run: inout OverviewRun, overview: [TrackedSubject]?) {
        for tap in run.taps {
            if let ended = run.watch.ended {
                tap.answered(.failure(Self.tapAfter(ended)))
            } else if let overview, let id = run.guide.select(at: (tap.x, tap.y), in: overview) {
                tap.answered(.success(id))
            } else {
                tap.answered(.failure(.noSubjectFound))
            }
        }
        run.taps = []
    }

    /// The answer to a tap on an overview that ended (`ended` says why).
    private static func tapAfter(_ ended: String) -> DockError {
        .notSupported("\(ended): a tap on the overview chooses nobody now")
    }

    /// Taps on the overview not answered when the run ends: nobody was chosen.
    func answerTapsLeft() {
        guard var run = overview, !run.taps.isEmpty else { return }
        answerTaps(of: &run, overview: nil)
        overview = run
    }

    /// The subjects the loop frames, `seen` by the dock's camera from `pose` in `picture`, with
    /// the overview's newest people joined to them (``OverviewGuide``); a watch that ended, or a
    /// calibration that no longer agrees with what both cameras see, is told once.
    func guideByOverview(_ run: OverviewRun, seen: [TrackedSubject], in picture: Image, from pose: DockOrientation,
                         at time: Double) -> ([TrackedSubject], OverviewGuide.Use?) {
        var run = run
        defer { overview = run }
        if let ended = run.watch.ended, !run.endTold {
            run.endTold = true
            notes?("overview: \(ended); the dock's camera goes on alone")
        }
        // After its end the dock's camera goes on alone: the overview's last people are where
        // they were, not where they are.
        guard run.watch.ended == nil, let sight = run.watch.latest else {
            answerTaps(of: &run, overview: nil)
            return (seen, nil)
        }
        let guided = run.guide.subjects(seen: seen, in: picture, from: pose, overview: sight.subjects, in: sight.image, at: time)
        answerTaps(of: &run, overview: sight.subjects)
        viewer?.offerOverview(sight.image, subjects: sight.subjects, chosen: run.guide.chosen)
        // Judged only while the overview runs (the guard above): after its end its last sight
        // is history, and a warning then would come after the run's own note that it ended.
        if !run.driftTold, let drift = run.guide.disagreement, drift > OverviewGuide.movedDegrees {
            run.driftTold = true
            notes?(String(format: "overview: the two cameras place the same people %.1f° apart (calibrated to %.1f°): was the dock or the overview camera moved? Run docktrack calibrate again",
                          drift, run.guide.mapping.checkedErrorDegrees.mean))
        }
        return guided
    }
}

extension AnyDock {
    /// What a dock in another process said of itself since the last call goes to the control
    /// server's client (``TrackControl/relay(_:accessory:)``); its docking is told in `notes`.
    /// Called before each frame; other docks say nothing.
    func relayNews(to control: TrackControl?, notes: (@Sendable (String) -> Void)?) {
        guard let dock = base as? ProtocolDock else { return }
        let news = dock.takeNews()
        for item in news {
            switch item.message {
            case .dockEvent("undocked"): notes?("dock: undocked (the phone is off it); no commands until it is docked again")
            case .dockEvent("docked"): notes?("dock: docked again; tracking goes on")
            default: break
            }
        }
        control?.relay(news, accessory: dock.accessory)
    }
}

/// Something that shows the run's annotated frames while someone watches (a control page):
/// asked each frame whether it wants one, and given the newest frame then.
public protocol FrameViewer: AnyObject, Sendable {
    /// Whether a frame is wanted now (someone is waiting for the next).
    var isWatched: Bool { get }
    /// The frame numbered `index` (no longer written from the loop): drawn already when
    /// `annotation` is nil, else to be drawn with it when shown.
    func offer(_ image: Image, annotation: FrameAnnotation?, index: Int)
    /// The overview camera's newest picture (`track --overview`), its people and the one the
    /// dock follows.
    func offerOverview(_ image: Image, subjects: [TrackedSubject], chosen: UUID?)
    /// Stops showing (a page's server ended and waited for); called once, when the run ends.
    func stop()
}

extension FrameViewer {
    public func offerOverview(_ image: Image, subjects: [TrackedSubject], chosen: UUID?) {}
}

/// What is drawn over a frame: the subjects, the framing (region of interest, target zone),
/// the dock's pose and the tracker's state.
public struct FrameAnnotation: Sendable {
    public var subjects: [TrackedSubject]
    /// Origin at the lower-left, as the controller has it.
    public var regionOfInterest: UnitRect
    public var target: (x: Double, y: Double)?
    public var pose: DockOrientation
    public var state: String
    /// Gestures recognized lately (shown for a moment after each).
    public var gestures: [GestureEvent]

    public init(subjects: [TrackedSubject], regionOfInterest: UnitRect, target: (x: Double, y: Double)?,
                pose: DockOrientation, state: String, gestures: [GestureEvent] = []) {
        self.subjects = subjects
        self.gestures = gestures
        self.regionOfInterest = regionOfInterest
        self.target = target
        self.pose = pose
        self.state = state
    }

    /// Draws it all on `canvas`.
    package func draw(on canvas: Canvas) {
        canvas.subjects(subjects)
        for gesture in gestures { canvas.gesture(hand: gesture.hand, label: gesture.kind == .followMe ? "follow me" : gesture.kind.rawValue) }
        canvas.framing(regionOfInterest: regionOfInterest, target: target, pose: pose, state: state)
    }
}
