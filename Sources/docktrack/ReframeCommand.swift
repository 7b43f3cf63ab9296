import ArgumentParser
import DockTrack
import Foundation

struct ReframeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reframe",
        abstract: "Reframe a recorded video as a dock would film it: a window that pans, tilts and zooms to keep the people framed.",
        discussion: """
            A virtual dock: DockTrack tracks and ranks the people in each whole frame, and the framing \
            controller drives a crop window over it as it drives a motorized dock (same modes, region of \
            interest, speed limits); the zoom frames one person head and shoulders and widens to fit a \
            group (automatic mode), and widens to the whole picture after --widen-after seconds with \
            nobody in view. The window never leaves the picture and never enlarges it more than \
            --max-upscale. OUT has the input's frame rate and, for every input frame processed, one \
            frame; the input's audio track is copied (not re-encoded) when OUT's container can hold it. \
            Each frame is shown through the window the dock reached --look-ahead seconds later, which \
            takes back the dock's lag: nothing later than that is known when a frame is framed.
            Each line of --states is track's, for OUT's frames: the subjects in unit coordinates of \
            the output picture (lower-left origin), plus "crop" (the window in unit coordinates of the \
            input) and "zoom".
            """
    )

    @Argument(help: "The video to reframe.")
    var input: String

    @Argument(help: "The reframed video (.mp4, .mov, .mkv or .avi).")
    var output: String

    @Option(help: ArgumentHelp("Width:height of the output, e.g. 9:16 for a phone held upright (default: the input's, or that of --size).", valueName: "W:H"))
    var aspect: String?

    @Option(help: ArgumentHelp("Output frame size (default: the widest window of the aspect ratio, at the input's scale).", valueName: "WxH"))
    var size: String?

    @OptionGroup var framingMode: FramingModeOption

    @Option(help: ArgumentHelp("Region of the output to keep subjects in: x,y,width,height in unit coordinates, origin at the upper-left.", valueName: "x,y,w,h"))
    var roi: String?

    @Option(help: "Zoom in at most until the input's pixels are enlarged this much in the output (1: never enlarged).")
    var maxUpscale = 2.0

    @Flag(help: "Keep the widest window: pan and tilt only.")
    var noZoom = false

    @Option(help: "Seconds with nobody in view before widening to the whole picture.")
    var widenAfter = 4.0

    @Option(help: "Degrees the input's width spans (turns the speed limits into pixels per second).")
    var fov = 70.0

    @Option(help: "Pan and tilt speed limit, degrees per second.")
    var maxSpeed = 30.0

    @Option(help: "Seconds of video looked at ahead of the frame being framed (0: a live dock's view, lagging behind).")
    var lookAhead = 0.5

    @Option(name: .shortAndLong, help: ArgumentHelp("Detector (see track). Faces alone by default here: bodies (hog-body) add people far away or turned away, and false bodies on cartoons.", valueName: "detector"))
    var detector = "dnn-face-verified"

    @OptionGroup var model: ModelOptions
    @OptionGroup var frames: FrameOptions

    @Option(help: "Run the detector on every Nth frame; tracked faces and bodies are found again between (see track).")
    var detectEvery = 12

    @Flag(help: "Do not read speaking and looking-at-camera cues from faces (faster; the speaker is then not preferred).")
    var noFaceCues = false

    @Flag(help: "Number identifiers 00000000-0000-0000-0000-000000000001, ... instead of random UUIDs.")
    var sequentialIdentifiers = false

    @Option(help: ArgumentHelp("Write subject states here, one JSON line per output frame ('-': stdout).", valueName: "file"))
    var states: String?

    @OptionGroup var trace: TraceOption

    @OptionGroup var annotate: AnnotateOption

    @Flag(help: "Print a summary to stderr at the end.")
    var summary = false

    func validate() throws {
        if let aspect, Self.parseAspect(aspect) == nil { throw ValidationError("--aspect takes W:H with positive numbers, e.g. 9:16, not '\(aspect)'") }
        if let size, Self.parseSize(size) == nil { throw ValidationError("--size takes WIDTHxHEIGHT, each 2 to 8192, e.g. 720x1280, not '\(size)'") }
        if let roi, UnitRect(upperLeftText: roi) == nil { throw ValidationError("--roi takes x,y,width,height in 0...1, not '\(roi)'") }
        if let size, let aspect, let asked = Self.parseSize(size), let wanted = Self.parseAspect(aspect),
           abs(Double(asked.width) / Double(asked.height) / wanted - 1) > 0.02 {
            throw ValidationError("--size \(size) is not of --aspect \(aspect)")
        }
        guard maxUpscale >= 1 && maxUpscale <= 16 else { throw ValidationError("--max-upscale must be between 1 and 16") }
        guard widenAfter > 0 && widenAfter.isFinite else { throw ValidationError("--widen-after must be a positive number of seconds") }
        guard fov > 1 && fov < 360 else { throw ValidationError("--fov must be between 1 and 360 degrees") }
        guard maxSpeed > 0 && maxSpeed <= 3600 else { throw ValidationError("--max-speed must be between 0 and 3600 degrees per second") }
        guard lookAhead >= 0 && lookAhead <= 10 else { throw ValidationError("--look-ahead must be between 0 and 10 seconds") }
        guard TrackConfiguration.detectEveryRange.contains(detectEvery) else { throw ValidationError(TrackConfiguration.detectEveryRangeMessage) }
        guard (input as NSString).standardizingPath != (output as NSString).standardizingPath else {
            throw ValidationError("OUT must not be the input")
        }
    }

    static func parseAspect(_ text: String) -> Double? {
        let parts = text.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 > 0 && $0.isFinite }), (0.01...100).contains(parts[0] / parts[1]) else { return nil }
        return parts[0] / parts[1]
    }

    static func parseSize(_ text: String) -> ImageSize? {
        guard let size = ImageSize(parsing: text), (2...8192).contains(size.width), (2...8192).contains(size.height) else { return nil }
        return size
    }

    func run() throws {
        // Ctrl-C and SIGTERM finish the output with the frames done so far, then exit 130 or 143.
        RunInterruption.install()
        try reportingErrors {
            let summary = try reframe()
            if self.summary {
                printError(String(format: "docktrack: %d frames of %dx%d reframed to %@ in %.2f s (%.1f frames per second, %.2fx real time)%@",
                                  summary.frames, summary.width, summary.height, output, summary.seconds, summary.framesPerSecond,
                                  summary.realTime, summary.sound == "copied" ? ", sound copied" : ""))
            }
            if states != "-" { try printLine(summary.jsonLine) }
            try exitIfInterrupted()
        }
    }

    /// Reframes `input` into `output`.
    func reframe() throws -> ReframeRun.Summary {
        let source = try MediaFile.open(input, stopping: { RunInterruption.requested })
        guard source.info.kind == .video || source is NetworkStream else { throw ToolError("\(input) is not a video") }
        var settings = ReframeRun.Settings()
        settings.aspect = aspect.flatMap(Self.parseAspect)
        settings.size = size.flatMap(Self.parseSize)
        settings.framing.mode = framingMode.mode
        if let roi { settings.framing.regionOfInterest = UnitRect(upperLeftText: roi)! }
        settings.maximumUpscale = maxUpscale
        settings.zooms = !noZoom
        settings.widenAfter = widenAfter
        settings.fieldOfView = fov * .pi / 180
        settings.degreesPerSecond = maxSpeed
        settings.lookAhead = lookAhead
        settings.frames = frames.selection

        let models = model.store
        var params = TrackingPipeline.Params()
        params.faceRoundInterval = TrackingPipeline.Params.faceRoundIntervalWithRedetection
        params.longestNeedlessRest = TrackingPipeline.Params.carriedNeedlessRest
        params.detectEvery = detectEvery
        params.minimumConfidence = model.threshold
        let cues = noFaceCues ? nil : FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models))
        let pipeline = TrackingPipeline(detector: try model.make(detector), cues: cues, params: params,
                                        identifiers: sequentialIdentifiers ? .sequential : .random)
        if cues != nil, let sound = try? AudioFileSource(path: input, stopping: { RunInterruption.requested }) { pipeline.listener = SpeechListener(.file(sound)) }
        try pipeline.redetect(models: models)

        let run = ReframeRun(input: input, output: output, source: source, settings: settings, pipeline: pipeline,
                             trace: try trace.output(), states: try states.map { try LineOutput(path: $0) },
                             overview: { size, rate in try annotate.video(size: size, framesPerSecond: rate) })
        var progress: ProgressLine?
        defer { progress?.finish() }
        return try run.run(stopping: { RunInterruption.requested }, onFrame: { done, total in
            if progress == nil { progress = ProgressLine(total: total) }
            progress!.update(done: done)
        }, warn: { printError("docktrack: \($0)") })
    }
}
