import ArgumentParser
import DockTrack
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure decoding, detection and the whole pipeline on a video file, against a plain OpenCV-Python loop.",
        discussion: """
            In one run, on the same frames: the baseline a user would write instead (OpenCV-Python \
            from Debian's python3-opencv, the res10 face DNN on every frame; skipped when python3 \
            cannot import cv2), decoding alone, each --detector alone (per-frame latency p50/p99), \
            and the whole pipeline (decode, detect every --detect-every frames, track, face cues, \
            rank, frame, command) for each --detect-every: frames per second, latency from frame \
            decoded to command made (p50, p99), CPU time per frame, peak resident memory, and the \
            ratio to the baseline. With --resize the input is first re-encoded at that size (H.264, \
            a temporary file) and every measurement, the baseline included, decodes that file. \
            --repeat measures the baseline and the pipelines several times and keeps the best of \
            each (shared machines are noisy). --recall DIR measures face recall on the labelled \
            pictures of samples/ for the pipeline's detector and for the baseline loop. --soak \
            MINUTES runs the pipeline over the input, looped, for as many frames as a 30 fps camera \
            gives in that time, and prints resident memory once per minute of frames.
            """
    )

    @Argument(help: "A video file.")
    var path: String

    @Option(name: .shortAndLong, parsing: .singleValue, help: "A detector to measure alone (repeatable).")
    var detector: [String] = []

    @Option(parsing: .singleValue, help: "Measure the whole pipeline detecting every Nth frame (repeatable; default: track's for the input's frame rate, every \(TrackConfiguration.defaultDetectEvery)th frame or more often below 13.3 fps).")
    var detectEvery: [Int] = []

    @OptionGroup var model: ModelOptions
    var threshold: Double { model.threshold }

    @Option(help: "Measure at most this many frames.")
    var frames: Int?

    @Option(help: ArgumentHelp("Resize decoded frames to WIDTHxHEIGHT first.", valueName: "WxH"))
    var resize: String?


    @Flag(help: "Skip the OpenCV-Python baseline.")
    var noPython = false

    @Option(help: ArgumentHelp("Also measure the stronger bar, a Python loop over MediaPipe's BlazeFace short-range face detector, run by this python (one with PyPI mediapipe 0.10.21: make bench makes .venv-bench/bin/python).", valueName: "python"))
    var mediapipe: String?

    @Option(help: ArgumentHelp("Also measure the same-job peer, a Python loop of YOLOX-nano (ONNX Runtime, one thread) with ByteTrack on every frame, run by this python (one with PyPI onnxruntime and supervision 0.26.1: make bench puts them in .venv-bench).", valueName: "python"))
    var yoloxBytetrack: String?

    @Option(help: ArgumentHelp("Pass over at most this many detection rounds in a row when the picture did not move outside the people found (0: look every round; default: track's, \(TrackingPipeline.Params.carriedNeedlessRest)).", valueName: "rounds"))
    var lookRest: Int?

    @Flag(help: "Also measure the pipeline with adaptive detection (track --adaptive-detection).")
    var adaptive = false

    @Option(help: "The detector the pipelines run (see track --detector).")
    var pipelineDetector = "default"

    @Flag(inversion: .prefixedNo, help: "Re-detect the tracked faces and bodies on frames the detector skips (see track --redetection).")
    var redetection = true

    @Flag(inversion: .prefixedNo, help: "Tell people apart by re-identification signatures (see track --reidentification).")
    var reidentification = true

    @Option(help: ArgumentHelp("Watch raised hands for the \"follow me\" palm (see track --gestures).", valueName: "on|off"))
    var gestures: Switch = .on

    @Option(help: ArgumentHelp("Also replay the input as a live camera at this many frames per second (real time) through the pipeline with detection on its own thread (track --detect-async), and measure capture-to-command latency.", valueName: "fps"))
    var live: Double?

    @Flag(help: "Also measure each pipeline with decoding, detection and tracking one after the other on one thread (without --serial they overlap: track's default for files).")
    var serial = false

    @Option(help: "Measure the baseline and each pipeline this many times and keep the best (default 1).")
    var `repeat` = 1

    @Option(help: ArgumentHelp("Also measure face recall on the labelled pictures in this folder (samples/): the pipeline's detector and the baseline loop.", valueName: "dir"))
    var recall: String?

    @Option(help: ArgumentHelp("Also reframe the input to this aspect ratio as docktrack reframe does with its defaults (decode, detect, track, frame, crop, encode, copy the sound) and give its speed in frames per second and times real time.", valueName: "W:H"))
    var reframe: String?

    @Option(help: ArgumentHelp("Also run the first pipeline over the input, looped, for this many minutes of 30 fps frames, printing resident memory each minute.", valueName: "minutes"))
    var soak: Double?

    func validate() throws {
        if `repeat` < 1 { throw ValidationError("--repeat must be 1 or more") }
        if let soak, soak <= 0 { throw ValidationError("--soak takes minutes, more than 0") }
        if let reframe, ReframeCommand.parseAspect(reframe) == nil { throw ValidationError("--reframe takes W:H, e.g. 9:16, not '\(reframe)'") }
        if let frames, frames < 1 { throw ValidationError("--frames must be 1 or more") }
        if let resize, ImageSize(parsing: resize) == nil { throw ValidationError("--resize takes WIDTHxHEIGHT, e.g. 1280x720, not '\(resize)'") }
        if !detectEvery.allSatisfy(TrackConfiguration.detectEveryRange.contains) { throw ValidationError(TrackConfiguration.detectEveryRangeMessage) }
        if let lookRest, !(0...100).contains(lookRest) { throw ValidationError("--look-rest must be between 0 and 100") }
    }


    static func padded(_ label: String) -> String {
        label.count >= 40 ? label + " " : label + String(repeating: " ", count: 40 - label.count)
    }

    /// One measurement of a whole pipeline.
    struct PipelineResult {
        var label: String
        var framesPerSecond: Double
        var latencies: [Double]
        var cpuPerFrame: Double
        var peakMemory: Double
        /// Where the time went, ms a frame per stage, in the order run.
        var profile: [(stage: String, milliseconds: Double)] = []
        /// Re-identification signatures read a frame, by why.
        var signatureReads: String?
    }

    func run() throws {
        try reportingErrors {
            if model.threads > 0 { OpenCVRuntime.threads = model.threads }
            let store = model.store
            var input = path
            var workFolder: URL?
            if let size = resize.flatMap(ImageSize.init(parsing:)) {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("docktrack-bench-\(getpid())")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                workFolder = folder
                input = try Self.reencode(path, size: size, frames: frames, into: folder)
            }
            defer { workFolder.map { try? FileManager.default.removeItem(at: $0) } }
            var source = try MediaFile.open(input)
            let info = source.info
            let limit = frames ?? info.frameCount ?? Int.max
            print("input: \(input) \(info.size), \(min(limit, info.frameCount ?? limit)) frames; OpenCV \(OpenCVRuntime.version), \(OpenCVRuntime.threads) threads")
            // Baseline and pipelines in rounds, so that a noisy spell of the machine hits
            // both; the best of each is kept.
            let tracksDefault = TrackConfiguration.detectEvery(framesPerSecond: info.framesPerSecond)
            let intervals = (detectEvery.isEmpty ? [tracksDefault] : detectEvery) + (adaptive ? [0] : [])
            let configurations = intervals.flatMap { every in every > 0 && serial ? [(every, true), (every, false)] : [(every, every > 0)] }
            var baseline: Double?
            var mediaPipe: Double?
            var peer: Double?
            var best: [PipelineResult?] = Array(repeating: nil, count: configurations.count)
            for round in 1...`repeat` {
                if `repeat` > 1 { printError("bench: round \(round) of \(`repeat`)") }
                if !noPython, let fps = OpenCVPythonBaseline(models: store).framesPerSecond(input: input, frames: limit) { baseline = max(baseline ?? 0, fps) }
                if let mediapipe, let fps = OpenCVPythonBaseline.mediaPipeFramesPerSecond(python: mediapipe, input: input, frames: limit) {
                    mediaPipe = max(mediaPipe ?? 0, fps)
                }
                if let yoloxBytetrack, let fps = OpenCVPythonBaseline.yoloxByteTrackFramesPerSecond(
                    python: yoloxBytetrack, model: store.model(YOLOXPersonDetector.modelFile), input: input, frames: limit) {
                    peer = max(peer ?? 0, fps)
                }
                for (i, (every, ahead)) in configurations.enumerated() {
                    let result = try measurePipeline(input: input, detectEvery: every, ahead: ahead, store: store, limit: limit)
                    if result.framesPerSecond > best[i]?.framesPerSecond ?? 0 { best[i] = result }
                }
            }
            let repeated = `repeat` > 1 ? String(format: ", best of %d", `repeat`) : ""
            if let baseline {
                print(Self.padded("baseline: OpenCV-Python res10") + String(format: "%9.1f fps", baseline) + repeated)
            } else if !noPython {
                print(Self.padded("baseline: OpenCV-Python res10") + "  unavailable (python3 with cv2: apt-get install python3-opencv)")
            }
            if let mediaPipe {
                print(Self.padded("bar: MediaPipe BlazeFace short-range") + String(format: "%9.1f fps", mediaPipe) + repeated)
            } else if let mediapipe {
                print(Self.padded("bar: MediaPipe BlazeFace short-range") + "  unavailable (\(mediapipe) cannot import mediapipe and cv2)")
            }
            if let peer {
                print(Self.padded("peer: YOLOX-nano + ByteTrack (Python)") + String(format: "%9.1f fps", peer) + repeated)
            } else if let yoloxBytetrack {
                print(Self.padded("peer: YOLOX-nano + ByteTrack (Python)") + "  unavailable (\(yoloxBytetrack) cannot import onnxruntime, supervision and cv2)")
            }
            for case let result? in best {
                var ratio = baseline.map { String(format: "   %.2fx baseline", result.framesPerSecond / $0) } ?? ""
                ratio += mediaPipe.map { String(format: "   %.2fx MediaPipe", result.framesPerSecond / $0) } ?? ""
                ratio += peer.map { String(format: "   %.2fx YOLOX+ByteTrack", result.framesPerSecond / $0) } ?? ""
                print(Self.padded(result.label)
                      + String(format: "%9.1f fps   p50 %6.1f ms   p99 %6.1f ms   cpu %5.1f ms/frame   peak %4.0f MB",
                               result.framesPerSecond, Statistics.percentile(result.latencies, 0.5) * 1000, Statistics.percentile(result.latencies, 0.99) * 1000,
                               result.cpuPerFrame * 1000, result.peakMemory) + ratio + repeated)
                if !result.profile.isEmpty {
                    print(Self.padded("  where the time goes, ms a frame") + result.profile.map { String(format: "%@ %.2f", $0.stage, $0.milliseconds) }.joined(separator: ", "))
                }
                if let reads = result.signatureReads {
                    print(Self.padded("  signatures read a frame") + reads)
                }
            }
            if let live { try measureLive(input: input, framesPerSecond: live, store: store, limit: limit) }
            if let reframe { try measureReframe(input: input, aspect: reframe, limit: limit) }
            if let recall { try measureRecall(folder: recall, store: store) }
            if let soak { try measureSoak(input: input, minutes: soak, detectEvery: intervals[0], store: store) }
            // Decode pass: keeps the frames (only) when detectors are to see the same pictures.
            var images: [Image] = []
            var decodedFrames = 0
            var clock = ContinuousClock.now
            while decodedFrames < limit, let frame = try source.nextFrame() {
                decodedFrames += 1
                if !detector.isEmpty { images.append(frame.image) }
            }
            let decodeSeconds = ProgressLine.seconds(ContinuousClock.now - clock)
            print(Self.padded("decode") + String(format: "%9.1f fps", Double(decodedFrames) / decodeSeconds))
            for name in detector {
                let detector = try DetectorCatalog.make(name, models: store)
                var latencies: [Double] = []
                var observations = 0
                _ = try detector.detect(in: images[0], minimumConfidence: threshold)  // warm-up
                for image in images {
                    clock = ContinuousClock.now
                    observations += try detector.detect(in: image, minimumConfidence: threshold).count
                    latencies.append(ProgressLine.seconds(ContinuousClock.now - clock))
                }
                print(Self.padded("detector \(name == detector.name ? name : "\(name) (\(detector.name))")")
                      + String(format: "%9.1f fps   p50 %6.1f ms   p99 %6.1f ms   %.2f observations/frame",
                               Double(images.count) / latencies.reduce(0, +), Statistics.percentile(latencies, 0.5) * 1000,
                               Statistics.percentile(latencies, 0.99) * 1000, Double(observations) / Double(images.count)))
            }
        }
    }

    /// `docktrack reframe INPUT OUT --aspect W:H` with its defaults, on the first `limit` frames,
    /// the best of --repeat runs.
    func measureReframe(input: String, aspect: String, limit: Int) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("docktrack-bench-reframe-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var best: ReframeRun.Summary?
        for _ in 1...`repeat` {
            var arguments = [input, folder.appendingPathComponent("reframed.mp4").path, "--aspect", aspect]
            if limit < Int.max { arguments += ["--end", String(limit)] }
            if let models = model.models { arguments += ["--models", models] }
            let summary = try ReframeCommand.parse(arguments).reframe()
            if summary.framesPerSecond > best?.framesPerSecond ?? 0 { best = summary }
        }
        guard let best else { return }
        print(Self.padded("reframe to \(aspect) (\(best.width)x\(best.height))")
              + String(format: "%9.1f fps   %.2fx real time", best.framesPerSecond, best.realTime)
              + (`repeat` > 1 ? String(format: ", best of %d", `repeat`) : ""))
    }

    /// The first `frames` frames of `path` resized to `size` and written as H.264 into
    /// `folder`: a clip of that size to decode, as a camera or file of that size would give.
    static func reencode(_ path: String, size: ImageSize, frames: Int?, into folder: URL) throws -> String {
        var source = try MediaFile.open(path)
        let file = folder.appendingPathComponent("input-\(size.width)x\(size.height).mp4").path
        var output: AnnotatedOutput? = try AnnotatedOutput(path: file, size: size, framesPerSecond: source.info.framesPerSecond ?? 30)
        var written = 0
        let started = ContinuousClock.now
        while written < frames ?? Int.max, let frame = try source.nextFrame() {
            try output?.write(try frame.image.resized(to: size))
            written += 1
        }
        output = nil  // closes the file
        printError(String(format: "bench: %@ re-encoded at %@ (%d frames, %.1f s)", path, "\(size)", written,
                          ProgressLine.seconds(ContinuousClock.now - started)))
        return file
    }

    /// A pipeline as `docktrack track` runs it over the file.
    func makePipeline(detectEvery: Int, store: ModelStore, asyncDetection: Bool = false) throws -> TrackingPipeline {
        try TrackingPipeline.overFile(detector: try DetectorCatalog.make(pipelineDetector, models: store), models: store, detectEvery: detectEvery,
                                      minimumConfidence: threshold, redetection: redetection, asyncDetection: asyncDetection,
                                      longestNeedlessRest: lookRest ?? TrackingPipeline.Params.carriedNeedlessRest,
                                      reidentification: reidentification, gestures: gestures == .on)
    }

    /// The whole pipeline over the file, decoding included, as `docktrack track` runs it:
    /// with `ahead`, decoding and detection on threads of their own ahead of the tracker
    /// (``DetectionAhead``), else one after the other; `detectEvery` 0 means adaptive detection.
    /// Latency: from a frame decoded to its command (ahead, that includes the wait in the queue).
    private func measurePipeline(input: String, detectEvery: Int, ahead: Bool, store: ModelStore, limit: Int) throws -> PipelineResult {
        ProcessResources.resetPeak()
        let source = try MediaFile.open(input)
        let pipeline = try makePipeline(detectEvery: detectEvery, store: store)
        // As track does before its first frame (the bars' loops make their detectors before
        // their clocks start too): the networks compiled for the input's size.
        try pipeline.detector?.prepare(for: source.info.size)
        var feed: RunFrames = ahead ? .ahead(pipeline.detectingAhead(of: source, selection: FrameSelection(end: limit)))
                                     : .source(source, FrameSelection())
        defer { feed.stop() }
        let cpu = ProcessResources.cpuSeconds(), started = ContinuousClock.now
        let latencies = try BenchLoops.overFile(&feed, pipeline: pipeline, limit: limit)
        let wall = ProgressLine.seconds(ContinuousClock.now - started)
        feed.stop()
        let frames = Double(max(1, latencies.count))
        var profile: [(stage: String, milliseconds: Double)] = []
        if let schedule = pipeline.schedule {
            for (name, seconds) in zip(schedule.partNames, schedule.partSeconds) { profile.append(("detect \(name)", seconds * 1000 / frames)) }
            if schedule.longestNeedlessRest > 0 { profile.append(("look needed?", schedule.needSeconds * 1000 / frames)) }
        }
        let stages = pipeline.stageSeconds
        profile += [("camera shift", stages.cameraShift), ("tracking", stages.tracking), ("identity", stages.identity), ("re-detection", stages.redetection),
                    ("cues and ranking", stages.cuesAndRanking), ("gestures", stages.gestures)].map { ($0.0, $0.1 * 1000 / frames) }
        let label = detectEvery == 0 ? String(format: "pipeline, adaptive (%.0f%% detected)", 100 * Double(pipeline.detections) / Double(max(1, latencies.count)))
                                     : "pipeline, detect every \(detectEvery)\(ahead ? "" : ", serial")"
                                       + (pipeline.schedule.map { $0.passedOver > 0 ? String(format: " (%.0f%% passed over)", 100 * Double($0.passedOver) / Double(max(1, $0.passedOver + $0.rounds))) : "" } ?? "")
        return PipelineResult(label: pipelineDetector == "default" ? label : "\(label) (\(pipelineDetector))",
                              framesPerSecond: Double(latencies.count) / wall, latencies: latencies,
                              cpuPerFrame: (ProcessResources.cpuSeconds() - cpu) / Double(max(1, latencies.count)), peakMemory: ProcessResources.residentMegabytes(),
                              profile: profile,
                              signatureReads: pipeline.signatureReads.map { reads in
                                  [("met someone", reads.met), ("back at an edge", reads.returned), ("new", reads.new), ("refreshed", reads.refreshed),
                                   ("in doubt", reads.doubtful)]
                                      .map { String(format: "%@ %.3f", $0.0, Double($0.1) / frames) }.joined(separator: ", ")
                                      + String(format: " (%.3f in all)", Double(reads.total) / frames)
                              })
    }

    /// The pipeline over the input looped for `minutes` of 30 fps frames, detecting ahead as
    /// `track` does on files: resident memory at each minute, and its growth from the first
    /// minute to the last.
    private func measureSoak(input: String, minutes: Double, detectEvery: Int, store: ModelStore) throws {
        ProcessResources.resetPeak()
        let perMinute = 30 * 60, total = Int(minutes * Double(perMinute))
        let pipeline = try makePipeline(detectEvery: max(1, detectEvery), store: store)
        let looped = LoopedFile(path: input, source: try MediaFile.open(input), framesPerSecond: 30)
        let detecting = pipeline.detectingAhead(of: looped, selection: FrameSelection(end: total))
        defer { detecting.stop() }
        var index = 0
        var samples: [Double] = []
        var progress = ProgressLine(total: total)
        let started = ContinuousClock.now
        var frames = RunFrames.ahead(detecting)
        _ = try BenchLoops.overFile(&frames, pipeline: pipeline) { done in
            index = done
            progress.update(done: index)
            if index % perMinute == 0 || index == total {
                samples.append(ProcessResources.residentMegabytes("VmRSS"))
                progress.finish()
                print(Self.padded(String(format: "soak, minute %.1f", Double(index) / Double(perMinute)))
                      + String(format: "resident %4.0f MB   %.1f fps so far", samples.last!,
                               Double(index) / ProgressLine.seconds(ContinuousClock.now - started)))
            }
        }
        progress.finish()
        print(Self.padded(String(format: "soak, %g minutes at 30 fps", minutes))
              + String(format: "%d frames (input looped %d times), resident first minute %.0f MB, last %.0f MB (%+.0f MB), peak %.0f MB",
                       index, looped.loops, samples.first ?? 0, samples.last ?? 0, (samples.last ?? 0) - (samples.first ?? 0), ProcessResources.residentMegabytes()))
    }

    /// Face recall on the labelled pictures of `folder` for the pipeline's detector and, in the
    /// same run, for the baseline loop's res10 on whole 300x300 frames.
    private func measureRecall(folder: String, store: ModelStore) throws {
        let labels = try LabelledFaces(folder: folder)
        func line(_ label: String, _ recall: FaceRecall) {
            print(Self.padded("face recall, \(label)")
                  + String(format: "%5.1f%%   portraits %d/%d   %@ frames %d/%d", 100 * recall.fraction, recall.portraitsFound,
                           recall.portraits, labels.clips.joined(separator: "+"), recall.framesFound, recall.frames))
        }
        line(pipelineDetector, try FaceRecall.measure(folder: folder, detector: try DetectorCatalog.make(pipelineDetector, models: store),
                                                      minimumConfidence: threshold))
        guard !noPython else { return }
        guard let baseline = try OpenCVPythonBaseline(models: store).faceRecall(folder: folder, minimumConfidence: threshold) else {
            print(Self.padded("face recall, baseline") + "  unavailable (python3 with cv2: apt-get install python3-opencv)")
            return
        }
        line("baseline res10 300x300", baseline)
    }

    /// The input replayed in real time at `framesPerSecond`, as a camera delivers it (frames that
    /// arrive while the previous one is still being processed are passed over, newest wins), with
    /// detection on its own thread: latency from a frame's arrival to its command.
    private func measureLive(input: String, framesPerSecond: Double, store: ModelStore, limit: Int) throws {
        var frames: [Image] = []
        var source = try MediaFile.open(input)
        while frames.count < min(limit, 600), let frame = try source.nextFrame() { frames.append(frame.image) }
        let pipeline = try makePipeline(detectEvery: 1, store: store, asyncDetection: true)
        let start = MonotonicClock.now()
        let (latencies, passedOver) = try BenchLoops.live(frames, framesPerSecond: framesPerSecond, pipeline: pipeline)
        let detected = pipeline.worker?.detectedFrames ?? 0
        print(Self.padded(String(format: "live %g fps, detection thread", framesPerSecond))
              + String(format: "%9.1f fps   p50 %6.1f ms   p99 %6.1f ms   %d frames passed over, %.1f detections/s",
                       Double(latencies.count) / (MonotonicClock.now() - start), Statistics.percentile(latencies, 0.5) * 1000,
                       Statistics.percentile(latencies, 0.99) * 1000, passedOver,
                       Double(detected) / (MonotonicClock.now() - start)))
    }
}
