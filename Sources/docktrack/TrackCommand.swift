import ArgumentParser
import DockTrack
import Foundation

struct TrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Track and rank the people (and chosen objects) in a video and drive a dock to frame them.",
        discussion: """
            stdout: dock commands, one JSON line per frame, e.g. \
            {"time":0.4,"command":"setAngularVelocity","velocity":{"x":0.0,"y":0.12,"z":0.0}} \
            (x pitch, positive tilts down; y yaw, positive pans right; rad/s), for a dock or docksim; \
            the recorded camera is taken as fixed at the dock's home pose. The last line is always a stop. \
            With --dock ADDRESS the dock is driven directly (another process on a socket, a VISCA or UVC \
            device, an ONVIF camera: onvif:HOST:PORT) and a live camera is taken to sit on it: each frame \
            is seen from where the dock reports it pointed at capture. A file with such a dock plays in \
            real time. The dock is stopped at every end: end of input, an error, Ctrl-C or SIGTERM \
            (exit 130, 143), and after 0.5 s without frames (an outage; it moves again when they return).
            With --observations FILE ('-': stdin) no video is read: the caller's observations \
            (lines in the format of docktrack detect, 10 to 30 per second by their time) are tracked \
            instead (custom tracking); observations outside that rate are reported on stderr.
            Each line of --states: {"frame":12,"time":0.4,"subjects":[{"identifier":"…UUID…","kind":"person",\
            "rect":{"x":…,"y":…,"width":…,"height":…},"saliencyRank":1,"speakingConfidence":0.8,\
            "lookingAtCameraConfidence":0.9,"faceRect":{…}}]}
            Subjects are ordered by saliencyRank (1 = most salient). kind is person or object; \
            rects are unit coordinates with the origin at the lower-left; the confidences are 0...1, \
            or null when the person's face is not seen; faceRect is present when it is.
            """
    )

    @Argument(help: "A video file (or an image: one frame), or a camera such as /dev/video0. Not with --observations.")
    var path: String?

    @OptionGroup(title: "Live camera") var live: CameraOptions

    @Option(help: ArgumentHelp("Track these observations (detect's JSON Lines; '-': stdin) instead of detecting in a video.", valueName: "file"))
    var observations: String?

    @OptionGroup var detection: DetectorOptions
    @OptionGroup var frames: FrameOptions

    @Option(help: ArgumentHelp("Write subject states here, one JSON line per frame ('-': stdout, instead of the commands).", valueName: "file"))
    var states: String?

    @OptionGroup var framing: FramingOptions
    @OptionGroup(title: "Dock") var dockOptions: DockOptions

    @Flag(help: "With --dock and a camera: the camera does not move with the dock (it stands beside it).")
    var fixedCamera = false

    @Option(help: ArgumentHelp("Run the detector on every Nth processed frame (default \(Self.defaultDetectEvery)); between, each tracked face and body is found again where it is predicted (--redetection). On a file, decoding and detection run on threads of their own ahead of the tracker (same results); live, the detection thread detects no more often than every Nth frame. 1: every frame (slower; see docktrack bench).", valueName: "n"))
    var detectEvery: Int?

    @Flag(inversion: .prefixedNo, help: "Detect on a thread of its own, newest frame wins: every frame is tracked and framed at once, detections are folded in as they finish. The default for cameras and network streams; on a file, read faster than real time, detections fall far behind (--detect-every is used there).")
    var detectAsync: Bool?

    @Flag(help: "Adapt the detection interval: it doubles (up to 8 frames) while the tracked subjects stay as they are, and is back to every frame on any change.")
    var adaptiveDetection = false

    @Flag(inversion: .prefixedNo, help: "On frames the detector skips, look for each tracked face and body again where it is predicted (one O-Net run per face, a template match per body): boxes stay on moving people and faces are checked every frame.")
    var redetection = true

    @Option(parsing: .singleValue, help: ArgumentHelp(
        "Also track the object in this box on the first processed frame: x,y,width,height in unit coordinates, origin at the upper-left (as read off the picture). Repeatable.",
        valueName: "x,y,w,h"))
    var object: [String] = []

    @Flag(help: "Do not read speaking and looking-at-camera cues from faces (faster).")
    var noFaceCues = false

    @Option(help: ArgumentHelp(
        "Sound for speaking confidence: auto (a video's own audio track; for a camera the ALSA inputs, following devices as they come and go), none, alsa or alsa:DEVICE, or an audio/video FILE.",
        valueName: "source"))
    var audio = "auto"

    @Flag(help: "Number identifiers 00000000-0000-0000-0000-000000000001, ... instead of random UUIDs (reproducible output).")
    var sequentialIdentifiers = false

    @Option(help: ArgumentHelp("Also write the video with subjects drawn on it (.mp4, .avi).", valueName: "file"))
    var annotate: String?

    @Flag(help: "Print a summary to stderr at the end.")
    var summary = false

    @Option(help: ArgumentHelp("Write the controller's trace: one tab-separated line per frame (time, pan, tilt, target pan, target tilt, commanded pan and tilt speed in rad and rad/s, state). Plot it with docktrack plot.", valueName: "file"))
    var trace: String?

    @Flag(help: "Show the annotated frames in a window while running (needs a display).")
    var preview = false

    @Option(help: ArgumentHelp("Serve the dock protocol on this Unix socket while tracking, as DockKit's API: another program switches system tracking off and on, drives the dock while it is off, changes the framing mode, region of interest and subject selection, and reads a tracking state per frame (docs/framing-and-docks.md: Controlling a running track).", valueName: "socket"))
    var serve: String?

    @Option(help: ArgumentHelp("Publish the reframed picture as a camera other programs open (a PipeWire video source with this name; docs/virtual-dock.md: A virtual camera). The frame is cropped, panned and zoomed as reframe does; no dock is driven.", valueName: "name"))
    var virtualCamera: String?

    @Option(help: ArgumentHelp("The virtual camera's frame size (its aspect ratio is the window's).", valueName: "WxH"))
    var virtualCameraSize = "1280x720"

    func validate() throws {
        if virtualCamera != nil {
            guard observations == nil, dockOptions.dock == nil, serve == nil else {
                throw ValidationError("--virtual-camera reframes the picture itself: not with --observations, --dock or --serve")
            }
            guard let size = ReframeCommand.parseSize(virtualCameraSize), size.width % 2 == 0, size.height % 2 == 0 else {
                throw ValidationError("--virtual-camera-size takes WIDTHxHEIGHT, even numbers from 2 to 8192, not '\(virtualCameraSize)'")
            }
        }
        let inputs = [path, live.camera, observations].compactMap { $0 }.count
        guard inputs == 1 else { throw ValidationError("give one input: a video PATH, --camera or --observations") }
        guard (detectEvery ?? 1) >= 1 else { throw ValidationError("--detect-every must be 1 or more") }
        for box in object where Self.parseBox(box) == nil {
            throw ValidationError("--object takes x,y,width,height in 0...1 with width and height > 0, not '\(box)'")
        }
    }

    /// The detection interval without --detect-every: on vtest.avi, mtcnn-face + hog-body-fast
    /// every 4th frame with re-detection between keeps the 17 labelled walk points with no
    /// identity change, as every frame does, at about 10 times its speed (docs/performance.md).
    static let defaultDetectEvery = 4

    /// A box given as x,y,w,h with the origin at the upper-left, as a UnitRect (lower-left origin).
    static func parseBox(_ text: String) -> UnitRect? {
        let values = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard values.count == 4 else { return nil }
        let box = UnitRect(upperLeftOrigin: UnitRect(x: values[0], y: values[1], width: values[2], height: values[3]))
        return box.isRegionOfPicture ? box : nil
    }

    func run() throws {
        // Ctrl-C and SIGTERM end every run as its end of input does (outputs finished, the dock
        // told to stop), then exit 130 or 143.
        RunInterruption.install()
        try reportingErrors {
            if let observations { return try runCustomTracking(observations) }
            var source = try live.open(input: path)
            let liveRun = LiveRun(source, duration: live.duration)
            // Live input detects on a thread of its own unless told otherwise; a file ahead of
            // the tracker every few frames.
            let detectAsync = self.detectAsync ?? (liveRun != nil)
            if detectAsync && liveRun == nil {
                printError("docktrack: note: --detect-async is for cameras; a file is read faster than real time and detections fall behind (use --detect-every)")
            }
            let detector = try detection.makeDetector()
            let models = ModelStore.locate(models: detection.models, cascades: detection.cascades)
            let cues = noFaceCues ? nil : FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models))
            var params = TrackingPipeline.Params()
            params.faceRoundInterval = redetection ? TrackingPipeline.Params.faceRoundIntervalWithRedetection : 1
            params.detectEvery = detectEvery ?? Self.defaultDetectEvery
            params.adaptiveDetection = adaptiveDetection
            params.asyncDetection = detectAsync
            params.minimumConfidence = detection.threshold
            // A still image has one frame to be seen in: its detections are its subjects (a
            // video's new person is confirmed by a second sighting).
            var trackerParams = PersonTracker.Params()
            if source.info.kind == .image { trackerParams.hitsToConfirm = 1 }
            let pipeline = TrackingPipeline(detector: detector, cues: cues, params: params, tracker: trackerParams,
                                            identifiers: sequentialIdentifiers ? .sequential : .random)
            // Threads that read or detect end before the process does (see DetectionWorker.stop).
            defer {
                pipeline.worker?.stop()
                (source as? any LiveFrameSource)?.stop()
            }
            if cues != nil { pipeline.listener = try listener(for: source) }
            if redetection { try pipeline.redetect(models: models) }
            if let virtualCamera {
                try runVirtualCamera(virtualCamera, source: &source, pipeline: pipeline, liveRun: liveRun)
                return try exitIfInterrupted()
            }
            let (statesOutput, commands) = try outputs()
            let framingParams = framing.params(for: source.info.size)
            let address = try dockOptions.address(default: "-")
            // The frame clock of a live dock: a camera's capture clock, or a file played in real time.
            let origin = (source as? any LiveFrameSource)?.clockOrigin ?? MonotonicClock.now()
            let loop = try frameLoop(framingParams, address: address, commands: commands, cameraOnDock: liveRun != nil && !fixedCamera,
                                     liveInput: liveRun != nil, clock: { MonotonicClock.now() - origin })
            let zoom = zoomWindow(framingParams).flatMap { widest in
                loop.dock.zooming.map { _ in CameraZoomFraming(widest: widest, digital: dockOptions.onvif.onvifDigitalPtz) }
            }
            let outputs = TrackSession.Outputs(
                states: statesOutput,
                video: try annotate.map { path throws in
                    try AnnotatedOutput(path: path, size: source.info.size, framesPerSecond: (source.info.framesPerSecond ?? 30) / Double(frames.stride))
                },
                window: preview ? PreviewWindow.open(title: "docktrack") : nil)
            let session = TrackSession(source: source, pipeline: pipeline, loop: loop, selection: frames.selection, liveRun: liveRun,
                                       liveDock: address.isLive, clockOrigin: origin, server: try serving(loop), outputs: outputs,
                                       objects: object.map { Self.parseBox($0)! }, cameraZoom: zoom)
            var progress = ProgressLine(total: source.info.frameCount.map { max(0, (min($0, frames.end ?? $0) - frames.start + frames.stride - 1) / frames.stride) })
            // A source failing midway (a camera unplugged, a truncated file) still gets its summary.
            do {
                _ = try session.run(onFrame: { progress.update(done: $0) })
            } catch {
                progress.finish()
                printSummary(session.summary)
                throw error
            }
            progress.finish()
            printSummary(session.summary)
            if let video = outputs.video { printError("docktrack: annotated output written to \(video.path)") }
            try exitIfInterrupted()
        }
    }

    /// --summary: frames and rate, a live run's latencies, the dock's latency, the detection thread.
    private func printSummary(_ summary: TrackSession.Summary) {
        guard self.summary else { return }
        printError(String(format: "docktrack: %d frames, %.2f s, %.1f frames per second", summary.frames, summary.seconds,
                          Double(summary.frames) / max(summary.seconds, 1e-9)))
        if let live = summary.live { printError("docktrack: \(live)") }
        if let latency = summary.commandLatency {
            printError(String(format: "docktrack: the dock's command-to-motion latency: %.0f ms, as measured from its motion states", latency * 1000))
        }
        if let (detected, replaced) = summary.detectionThread {
            printError("docktrack: detection thread: \(detected) frames detected, \(replaced) passed over for newer ones")
        }
    }

    /// The dock is left still at every end (a camera moving at the last velocity command would go
    /// on turning to its end stop): a live dock is sent a stop and given 3 s to take it; on the
    /// command stream the last line is a stop.
    private func stopMotors<Controller, D: Dock>(_ loop: inout FrameLoop<Controller, D>, at time: Double) {
        try? loop.dock.perform(.setAngularVelocity(.zero), at: time)
        loop.dock.settle(timeout: 3)
    }

    /// The sound to fuse into speaking confidence, as --audio says; `nil`: the picture alone.
    private func listener(for source: any FrameSource) throws -> SpeechListener? {
        let announce: (AudioRouteChange) -> Void = { printError("docktrack: \($0)") }
        let live = source as? any LiveFrameSource
        switch audio {
        case "none":
            return nil
        case "auto" where live == nil:
            // The video's own audio track, when it has one.
            guard let path, let file = try? AudioFileSource(path: path) else { return nil }
            return SpeechListener(.file(file))
        case "auto", "alsa":
            return SpeechListener(.live(AudioRouter(system: ALSAInputSystem(clockOrigin: live?.clockOrigin ?? MonotonicClock.now()))),
                                  onRouteChange: announce)
        case let spec where spec.hasPrefix("alsa:"):
            let router = AudioRouter(system: ALSAInputSystem(clockOrigin: live?.clockOrigin ?? MonotonicClock.now()),
                                     preferred: String(spec.dropFirst(5)))
            if router.current == nil { printError("docktrack: audio input \(spec.dropFirst(5)) is not available; speaking from the picture alone until an input appears") }
            return SpeechListener(.live(router), onRouteChange: announce)
        default:
            do {
                return SpeechListener(.file(try AudioFileSource(path: audio)))
            } catch {
                throw ToolError(error.description)
            }
        }
    }

    /// The frame loop: the dock at `address` (commands on `commands` for `-`; the dock's pose
    /// from a simulator following them), the trace to --trace. `clock` is the frame clock of a
    /// live dock.
    private func frameLoop(_ params: FramingController.Params, address: DockAddress, commands: LineOutput?, cameraOnDock: Bool,
                           liveInput: Bool = false, clock: @escaping @Sendable () -> Double) throws -> FrameLoop<FramingController, AnyDock> {
        var params = params
        dockOptions.apply(to: &params, searchByDefault: address.isLive)
        if let home = try dockOptions.onvifHome(at: address) { params.home = home }
        let dock = try address.open(limits: params.limits, home: params.home, clock: clock, onvif: onvifSettings(params),
                                    followedLive: liveInput) { try commands?.write($0) }
        return try FrameLoop(controller: FramingController(params: params), dock: dock, cameraOnDock: address.isLive && cameraOnDock,
                             clock: address.isLive ? clock : nil, trace: trace.map { path throws in try LineOutput(path: path) })
    }

    /// The ONVIF settings of the options; a digital PTZ's window over the widest picture, as
    /// the framing's camera sees it (--fov across its width) at the camera's largest zoom.
    private func onvifSettings(_ params: FramingController.Params) throws -> ONVIFSettings {
        var settings = try dockOptions.onvifSettings()
        if let widest = zoomWindow(params), dockOptions.onvif.onvifDigitalPtz { settings.digitalWindow = widest }
        return settings
    }

    /// The picture at the widest zoom as a window (its aspect and --fov from the framing's
    /// camera), up to --onvif-zoom; `nil` without it.
    private func zoomWindow(_ params: FramingController.Params) -> CropWindow? {
        guard let largest = dockOptions.onvif.onvifZoom else { return nil }
        let camera = params.camera
        // A picture 1000 px wide of the camera's aspect: only ratios and angles are used.
        let aspect = tan(camera.horizontalFieldOfView / 2) / tan(camera.verticalFieldOfView / 2)
        return CropWindow(sourceSize: ImageSize(width: 1000, height: max(1, Int((1000 / aspect).rounded()))), aspect: aspect,
                          fieldOfView: camera.horizontalFieldOfView, maximumZoom: largest)
    }

    /// The control server of --serve, bound before the first frame; `nil` without the option.
    private func serving(_ loop: FrameLoop<FramingController, AnyDock>) throws -> TrackControlServer? {
        guard let serve else { return nil }
        let control = TrackControl(limits: loop.controller.params.limits, home: loop.controller.params.home)
        let identity = AccessoryIdentity(name: "docktrack track", identifier: UUID(), firmwareVersion: "0.1.0",
                                         hardwareModel: "tracker")
        do {
            return try TrackControlServer(path: serve, control: control, identity: identity) { printError("docktrack: serve: \($0)") }
        } catch {
            throw ToolError("--serve \(serve): \(error)")
        }
    }

    /// Subject states (when asked for) and commands (on stdout unless the states are).
    private func outputs() throws -> (states: LineOutput?, commands: LineOutput?) {
        let statesOutput = try states.map { try LineOutput(path: $0) }
        return (statesOutput, states == "-" ? nil : try LineOutput(path: "-"))
    }

    /// Custom tracking: the caller's observations instead of a detector's, checked for rate.
    private func runCustomTracking(_ path: String) throws {
        let input: FileHandle
        if path == "-" {
            input = .standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw FrameSourceError.fileNotFound(path: path) }
            input = handle
        }
        defer { withExtendedLifetime(input) {} }
        let pipeline = TrackingPipeline(detector: nil, cues: nil, identifiers: sequentialIdentifiers ? .sequential : .random)
        let customTracking = TrackingPipeline(detector: nil, cues: nil)
        var rate = ObservationRateMonitor()
        let (statesOutput, commands) = try outputs()
        var loop: FrameLoop<FramingController, AnyDock>?
        var server: TrackControlServer?
        defer { server?.stop() }
        let address = try dockOptions.address(default: "-")
        let origin = MonotonicClock.now()
        var lineNumber = 0
        var lastTime = 0.0
        for item in LineReader(fileDescriptor: input.fileDescriptor, stopped: { RunInterruption.requested }) {
            lineNumber += 1
            guard case .line(let line) = item else {
                printError("docktrack: observations line \(lineNumber): longer than \(LineFramer.defaultMaximumLineLength) bytes; skipped")
                continue
            }
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let record: DetectionRecord
            do {
                record = try JSONDecoder().decode(DetectionRecord.self, from: Data(line.utf8))
            } catch {
                printError("docktrack: observations line \(lineNumber): not an observation line (\(JSONDecoding.describe(error)))")
                continue
            }
            do {
                try rate.record(at: record.time)
            } catch {
                printError("docktrack: observations line \(lineNumber) at time \(record.time): \(error)")
            }
            if loop == nil {
                loop = try frameLoop(framing.params(for: record.size), address: address, commands: commands, cameraOnDock: false,
                                     clock: { MonotonicClock.now() - origin })
                server = try serving(loop!)
            }
            server?.control.apply(to: &loop!, pipeline: pipeline, customTracking: customTracking, at: record.time)
            let step = try loop!.step(capturedAt: record.time) { _ in
                try pipeline.process(observations: record.observations, at: record.time)
            }
            let states = SubjectStatesRecord(frame: record.frame, time: record.time, subjects: step.subjects)
            server?.control.publish(states, motion: step.atCommand)
            try statesOutput?.write(states.jsonLine)
            lastTime = record.time
            if RunInterruption.requested { break }
        }
        if loop != nil { stopMotors(&loop!, at: address.isLive ? MonotonicClock.now() - origin : lastTime) }
        try exitIfInterrupted()
    }

    /// --virtual-camera: each frame reframed by a virtual dock (as reframe does, with no
    /// look-ahead) and published as a camera; a file plays in real time.
    private func runVirtualCamera(_ name: String, source: inout any FrameSource, pipeline: TrackingPipeline, liveRun: LiveRun?) throws {
        let size = ReframeCommand.parseSize(virtualCameraSize)!
        let framesPerSecond = source.info.framesPerSecond ?? 30
        let output: VirtualCameraOutput
        do {
            output = try VirtualCameraOutput(name: name, size: size, framesPerSecond: Int(framesPerSecond.rounded()))
        } catch {
            throw ToolError(error.description)
        }
        defer { output.close() }
        var window = CropWindow(sourceSize: source.info.size, aspect: Double(size.width) / Double(size.height), fieldOfView: framing.fov * .pi / 180)
        window.maximumZoom = max(1, 2 * window.widest.height / Double(size.height))
        var params = framing.params(for: source.info.size)
        params.limits = ReframeCommand.speeds(degreesPerSecond: 30)
        var reframer = try Reframer(dock: VirtualDock(window: window, speeds: params.limits), framing: params, lookAhead: 0,
                                    trace: trace.map { path throws in try LineOutput(path: path) })
        let statesOutput = try states.map { try LineOutput(path: $0) }
        printError("docktrack: virtual camera \(name): \(size) at \(Int(framesPerSecond.rounded())) fps")
        let origin = (source as? any LiveFrameSource)?.clockOrigin ?? MonotonicClock.now()
        var count = 0
        let started = MonotonicClock.now()
        // A file plays in real time (a late frame goes at once).
        var pacer = RealTimePacer(startingAt: started)
        try frames.selection.forEachFrame(of: &source) { frame in
            let capture = liveRun == nil ? pacer.wait(for: frame.time) : origin + frame.time
            let subjects = try pipeline.process(frame)
            guard let shot = try reframer.push(frame, subjects: subjects) else { return }
            let picture = try shot.frame.image.cropped(to: shot.crop, size: size)
            do {
                try output.publish(picture, capturedAt: capture)
            } catch {
                throw ToolError("\(error)")
            }
            try statesOutput?.write(SubjectStatesRecord(frame: frame.index, time: frame.time, subjects: subjects).jsonLine)
            count += 1
        } stopping: { liveRun?.shouldStop == true || RunInterruption.requested }
        output.close()
        let latencies = output.latencies
        printError(String(format: "docktrack: virtual camera %@: %d frames published, %d passed over for newer ones; capture-to-output latency p50 %.1f ms, p99 %.1f ms",
                          name, output.written, output.replaced, Statistics.percentile(latencies, 0.5) * 1000,
                          Statistics.percentile(latencies, 0.99) * 1000))
    }
}
