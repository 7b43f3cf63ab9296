import DockTrackAudio
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking
import Foundation

/// `reframe` as the library runs it: a recorded video reframed as a dock would film it. The
/// pipeline tracks the people in each whole frame, a ``Reframer`` drives a crop window over it
/// (a ``VirtualDock``), and each frame is written through its window; the input's sound is then
/// copied beside the picture. The output is written to a file of its own first and takes its
/// name only when it is whole.
package struct ReframeRun {
    /// How the window frames, and how large the output is.
    package struct Settings {
        /// Width over height of the output (`nil`: that of ``size``, or the input's).
        package var aspect: Double?
        /// The output's size (`nil`: the widest window of the aspect, at the input's scale).
        package var size: ImageSize?
        /// Framing mode and region of interest (the limits are the window's speeds).
        package var framing = FramingController.Params()
        /// The input's pixels are enlarged at most this much in the output.
        package var maximumUpscale = 2.0
        /// Whether the window zooms (or keeps the widest window, panning and tilting only).
        package var zooms = true
        /// Seconds with nobody in view before the window widens to the whole picture.
        package var widenAfter = 4.0
        /// Radians the input's width spans.
        package var fieldOfView = 70.0 * .pi / 180
        /// The window's pan and tilt speed limit.
        package var degreesPerSecond = 30.0
        /// Seconds of video looked at ahead of the frame being framed.
        package var lookAhead = 0.5
        package var frames = FrameSelection(start: 0, end: nil, stride: 1)

        package init() {}
    }

    /// What a run did: stdout's last line (one JSON object), for batches of files.
    package struct Summary {
        package var input: String
        package var output: String
        package var frames: Int
        package var width: Int
        package var height: Int
        package var seconds: Double
        package var framesPerSecond: Double
        /// Seconds of video per second of work.
        package var realTime: Double
        /// "copied", "none" (the input has no sound) or "dropped: REASON".
        package var sound: String

        package var jsonLine: String {
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

    package var input: String
    package var output: String
    package var source: any FrameSource
    package var settings: Settings
    package var pipeline: TrackingPipeline
    /// Where the controller's trace goes, if anywhere.
    package var trace: LineOutput?
    /// Where the states lines go (track's, with the window and the zoom), if anywhere.
    package var states: LineOutput?
    /// The whole input with the subjects and the window drawn, made for the input's size and
    /// the output's frame rate, if wanted.
    package var overview: (ImageSize, Double) throws -> AnnotatedOutput?

    package init(input: String, output: String, source: any FrameSource, settings: Settings, pipeline: TrackingPipeline,
                 trace: LineOutput?, states: LineOutput?, overview: @escaping (ImageSize, Double) throws -> AnnotatedOutput?) {
        self.input = input
        self.output = output
        self.source = source
        self.settings = settings
        self.pipeline = pipeline
        self.trace = trace
        self.states = states
        self.overview = overview
    }

    /// The output's size for `settings` over an input of `inputSize`, and the window over it.
    package static func window(for settings: Settings, inputSize: ImageSize) throws -> (CropWindow, ImageSize) {
        let aspect = settings.aspect ?? settings.size.map { Double($0.width) / Double($0.height) }
            ?? Double(inputSize.width) / Double(inputSize.height)
        var window = CropWindow(sourceSize: inputSize, aspect: aspect, fieldOfView: settings.fieldOfView)
        // As asked, or the widest window's size in even pixels (what encoders take).
        let size = settings.size ?? ImageSize(width: max(2, Int(window.widest.width / 2) * 2), height: max(2, Int(window.widest.height / 2) * 2))
        if let asked = settings.size, let wanted = settings.aspect, abs(Double(asked.width) / Double(asked.height) / wanted - 1) > 0.02 {
            throw TrackSetupError("the output size \(asked) is not of the aspect " + String(format: "%.3f", wanted))
        }
        window.maximumZoom = settings.zooms ? max(1, settings.maximumUpscale * window.widest.height / Double(size.height)) : 1
        return (window, size)
    }

    /// Reframes until the input's end or `stopping` (asked between frames); `onFrame` is told
    /// the frames written so far and the frames there will be, when known.
    package func run(stopping: () -> Bool, onFrame: (_ done: Int, _ total: Int?) -> Void,
                     warn: (String) -> Void) throws -> Summary {
        let inputSize = source.info.size
        let (window, outputSize) = try Self.window(for: settings, inputSize: inputSize)
        var framing = settings.framing
        let speeds = DockLimits.window(degreesPerSecond: settings.degreesPerSecond)
        framing.limits = speeds
        var zoomParams = ZoomFraming.Params()
        zoomParams.widenAfter = settings.widenAfter
        let framesPerSecond = source.info.framesPerSecond ?? 30
        let stride = settings.frames.stride
        let aheadFrames = Int((settings.lookAhead * framesPerSecond / Double(stride)).rounded())
        var reframer = try Reframer(dock: VirtualDock(window: window, speeds: speeds), framing: framing,
                                    zoom: settings.zooms ? ZoomFraming(params: zoomParams) : nil, lookAhead: aheadFrames, trace: trace)

        // The picture goes to a file of its own first; the sound joins it at the end.
        let outputFolder = (output as NSString).deletingLastPathComponent
        if !outputFolder.isEmpty, !FileManager.default.fileExists(atPath: outputFolder) {
            throw TrackSetupError("cannot write \(output): its folder \(outputFolder) does not exist")
        }
        let fileExtension = (output as NSString).pathExtension.isEmpty ? "mp4" : (output as NSString).pathExtension
        let pictureOnly = (outputFolder.isEmpty ? "." : outputFolder) + "/.\((output as NSString).lastPathComponent).\(getpid()).video.\(fileExtension)"
        defer { try? FileManager.default.removeItem(atPath: pictureOnly) }
        let rate = framesPerSecond / Double(stride)
        let video = try AnnotatedOutput(path: pictureOnly, size: outputSize, framesPerSecond: rate)
        let overview = try self.overview(inputSize, rate)
        let total = source.info.frameCount.map { settings.frames.count(of: $0) }
        let started = MonotonicClock.now()
        var count = 0
        var firstTime: Double?
        var lastTime = 0.0
        func show(_ shot: Reframer.Shot) throws {
            try video.write(try shot.frame.image.cropped(to: shot.crop, size: outputSize))
            let record = SubjectStatesRecord(frame: shot.frame.index, time: shot.frame.time, subjects: shot.subjects)
            try states?.write(Self.statesLine(record, crop: window.unitRect(of: shot.crop), zoom: shot.zoom))
            if let overview {
                let canvas = try Canvas(copying: shot.frame.image)
                canvas.subjects(shot.wholeFrameSubjects)
                canvas.box(window.unitRect(of: shot.crop), color: .objectYellow, label: String(format: "zoom %.2f", shot.zoom), thickness: 3)
                try overview.write(canvas.image)
            }
            count += 1
            onFrame(count, total)
        }
        do {
            var frames = RunFrames.ahead(pipeline.detectingAhead(of: source, selection: settings.frames, cuts: reframer.shotBoundary))
            reframer.own("detection ahead", stop: frames.stop)
            defer { reframer.end() }
            try frames.forEach(stopping: stopping) { item in
                firstTime = firstTime ?? item.frame.time
                lastTime = item.frame.time
                if let shot = try reframer.push(item.frame, subjects: try item.subjects(by: pipeline), startsShot: item.startsShot) { try show(shot) }
                return true
            }
            for shot in reframer.finish() { try show(shot) }
        }
        guard count > 0 else { throw TrackSetupError("\(input): no frames in the selection") }
        video.close()
        // The input's sound over the frames processed: from the first one's time to the last one's end.
        let soundEnd = settings.frames.end == nil ? nil : lastTime + 1 / framesPerSecond
        let outcome: SoundCopy.Outcome
        do {
            outcome = try SoundCopy.mux(video: pictureOnly, soundFrom: input, start: firstTime ?? 0, end: soundEnd, to: output)
        } catch {
            throw TrackSetupError("\(output): \(error)")
        }
        let sound: String
        switch outcome {
        case .copied: sound = "copied"
        case .videoOnly(let reason) where reason.hasSuffix("no audio track"): sound = "none"
        case .videoOnly(let reason):
            warn("\(output): written without sound: \(reason)")
            sound = "dropped: \(reason)"
        }
        let seconds = max(MonotonicClock.now() - started, 1e-9)
        return Summary(input: input, output: output, frames: count, width: outputSize.width, height: outputSize.height,
                       seconds: seconds, framesPerSecond: Double(count) / seconds, realTime: Double(count) / rate / seconds, sound: sound)
    }

    /// A states line of track's, with the window and the zoom.
    package static func statesLine(_ record: SubjectStatesRecord, crop: UnitRect, zoom: Double) -> String {
        var line = record.jsonLine
        guard line.hasSuffix("}") else { return line }
        line.removeLast()
        return line + String(format: ",\"crop\":{\"x\":%.5f,\"y\":%.5f,\"width\":%.5f,\"height\":%.5f},\"zoom\":%.4f}", crop.x, crop.y, crop.width, crop.height, zoom)
    }
}
