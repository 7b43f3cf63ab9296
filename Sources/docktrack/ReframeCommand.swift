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
        guard maxUpscale >= 1 && maxUpscale <= 16 else { throw ValidationError("--max-upscale must be between 1 and 16") }
        guard widenAfter > 0 && widenAfter.isFinite else { throw ValidationError("--widen-after must be a positive number of seconds") }
        guard fov > 1 && fov < 360 else { throw ValidationError("--fov must be between 1 and 360 degrees") }
        guard maxSpeed > 0 && maxSpeed <= 3600 else { throw ValidationError("--max-speed must be between 0 and 3600 degrees per second") }
        guard lookAhead >= 0 && lookAhead <= 10 else { throw ValidationError("--look-ahead must be between 0 and 10 seconds") }
        guard detectEvery >= 1 else { throw ValidationError("--detect-every must be 1 or more") }
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

    /// What a run did: stdout's last line (one JSON object), for batches of files.
    struct Summary {
        var input: String
        var output: String
        var frames: Int
        var width: Int
        var height: Int
        var seconds: Double
        var framesPerSecond: Double
        /// Seconds of video per second of work.
        var realTime: Double
        var sound: String

        var jsonLine: String {
            var line = JSONLine()
            line.add("input", input)
            line.add("output", output)
            line.add("status", "ok")
            line.add("frames", frames)
            line.add("width", width)
            line.add("height", height)
            line.add("seconds", seconds, digits: 2)
            line.add("framesPerSecond", framesPerSecond, digits: 1)
            line.add("realTime", realTime, digits: 2)
            line.add("sound", sound)
            return line.text
        }
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
    func reframe() throws -> Summary {
            let source = try MediaFile.open(input)
            guard source.info.kind == .video || source is NetworkStream else { throw ToolError("\(input) is not a video") }
            let inputSize = source.info.size
            let asked = size.flatMap(Self.parseSize)
            let aspectRatio = aspect.flatMap(Self.parseAspect)
                ?? asked.map { Double($0.width) / Double($0.height) } ?? Double(inputSize.width) / Double(inputSize.height)
            var window = CropWindow(sourceSize: inputSize, aspect: aspectRatio, fieldOfView: fov * .pi / 180)
            // The output: as asked, or the widest window's size in even pixels (what encoders take).
            let outputSize = asked ?? ImageSize(width: max(2, Int(window.widest.width / 2) * 2), height: max(2, Int(window.widest.height / 2) * 2))
            if let asked, let aspect, abs(Double(asked.width) / Double(asked.height) / aspectRatio - 1) > 0.02 {
                throw ToolError("--size \(asked) is not of --aspect \(aspect)")
            }
            window.maximumZoom = noZoom ? 1 : max(1, maxUpscale * window.widest.height / Double(outputSize.height))

            let models = model.store
            var params = TrackingPipeline.Params()
            params.faceRoundInterval = TrackingPipeline.Params.faceRoundIntervalWithRedetection
            params.detectEvery = detectEvery
            params.minimumConfidence = model.threshold
            let cues = noFaceCues ? nil : FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models))
            let pipeline = TrackingPipeline(detector: try model.make(detector), cues: cues, params: params,
                                            identifiers: sequentialIdentifiers ? .sequential : .random)
            if cues != nil, let sound = try? AudioFileSource(path: input) { pipeline.listener = SpeechListener(.file(sound)) }
            try pipeline.redetect(models: models)

            var framing = FramingController.Params()
            framing.mode = framingMode.mode
            if let roi { framing.regionOfInterest = UnitRect(upperLeftText: roi)! }
            let speeds = DockLimits.window(degreesPerSecond: maxSpeed)
            framing.limits = speeds
            var zoomParams = ZoomFraming.Params()
            zoomParams.widenAfter = widenAfter
            let framesPerSecond = source.info.framesPerSecond ?? 30
            let aheadFrames = Int((lookAhead * framesPerSecond / Double(frames.stride)).rounded())
            var reframer = try Reframer(dock: VirtualDock(window: window, speeds: speeds), framing: framing,
                                        zoom: noZoom ? nil : ZoomFraming(params: zoomParams), lookAhead: aheadFrames,
                                        trace: try trace.output())

            // The picture goes to a file of its own first; the sound joins it at the end.
            let outputFolder = (output as NSString).deletingLastPathComponent
            if !outputFolder.isEmpty, !FileManager.default.fileExists(atPath: outputFolder) {
                throw ToolError("cannot write \(output): its folder \(outputFolder) does not exist")
            }
            let pictureOnly = (outputFolder.isEmpty ? "." : outputFolder) + "/.\((output as NSString).lastPathComponent).\(getpid()).video.\((output as NSString).pathExtension.isEmpty ? "mp4" : (output as NSString).pathExtension)"
            defer { try? FileManager.default.removeItem(atPath: pictureOnly) }
            let rate = framesPerSecond / Double(frames.stride)
            let video = try AnnotatedOutput(path: pictureOnly, size: outputSize, framesPerSecond: rate)
            let overview = try annotate.video(size: inputSize, framesPerSecond: rate)
            let statesOutput = try states.map { try LineOutput(path: $0) }
            var progress = ProgressLine(total: source.info.frameCount.map { frames.selection.count(of: $0) })
            let started = ContinuousClock.now
            var count = 0
            var firstTime: Double?
            var lastTime = 0.0
            func show(_ shot: Reframer.Shot) throws {
                try video.write(try shot.frame.image.cropped(to: shot.crop, size: outputSize))
                let record = SubjectStatesRecord(frame: shot.frame.index, time: shot.frame.time, subjects: shot.subjects)
                try statesOutput?.write(Self.statesLine(record, crop: window.unitRect(of: shot.crop), zoom: shot.zoom))
                if let overview {
                    let canvas = try Canvas(copying: shot.frame.image)
                    canvas.subjects(shot.wholeFrameSubjects)
                    canvas.box(window.unitRect(of: shot.crop), color: .objectYellow, label: String(format: "zoom %.2f", shot.zoom), thickness: 3)
                    try overview.write(canvas.image)
                }
                count += 1
                progress.update(done: count)
            }
            do {
                let detecting = pipeline.detectingAhead(of: source, selection: frames.selection, cuts: reframer.shotBoundary)
                defer { detecting.stop() }
                while !RunInterruption.requested, let (frame, observations, _, startsShot) = try detecting.nextWithCut() {
                    firstTime = firstTime ?? frame.time
                    lastTime = frame.time
                    let subjects = try pipeline.process(frame, detected: observations, startsShot: startsShot)
                    if let shot = try reframer.push(frame, subjects: subjects, startsShot: startsShot) { try show(shot) }
                }
                for shot in reframer.finish() { try show(shot) }
            } catch {
                progress.finish()
                throw error
            }
            progress.finish()
            guard count > 0 else { throw ToolError("\(input): no frames in the selection") }
            video.close()
            // The input's sound over the frames processed: from the first one's time to the last one's end.
            let soundEnd = frames.end == nil ? nil : lastTime + 1 / framesPerSecond
            let outcome: SoundCopy.Outcome
            do {
                outcome = try SoundCopy.mux(video: pictureOnly, soundFrom: input, start: firstTime ?? 0, end: soundEnd, to: output)
            } catch {
                throw ToolError("\(output): \(error)")
            }
            if case .videoOnly(let reason) = outcome, !reason.hasSuffix("no audio track") {
                printError("docktrack: \(output): written without sound: \(reason)")
            }
            let seconds = max(ProgressLine.seconds(ContinuousClock.now - started), 1e-9)
            let sound: String
            switch outcome {
            case .copied: sound = "copied"
            case .videoOnly(let reason): sound = reason.hasSuffix("no audio track") ? "none" : "dropped: \(reason)"
            }
            return Summary(input: input, output: output, frames: count, width: outputSize.width, height: outputSize.height,
                           seconds: seconds, framesPerSecond: Double(count) / seconds, realTime: Double(count) / rate / seconds, sound: sound)
    }

    /// A states line of track's, with the window and the zoom.
    static func statesLine(_ record: SubjectStatesRecord, crop: UnitRect, zoom: Double) -> String {
        var line = record.jsonLine
        guard line.hasSuffix("}") else { return line }
        line.removeLast()
        return line + String(format: ",\"crop\":{\"x\":%.5f,\"y\":%.5f,\"width\":%.5f,\"height\":%.5f},\"zoom\":%.4f}", crop.x, crop.y, crop.width, crop.height, zoom)
    }
}
