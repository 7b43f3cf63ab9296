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
            ratio to the baseline. With --resize the decoded frames are resized first \
            (e.g. 1280x720), in every measurement including the baseline.
            """
    )

    @Argument(help: "A video file.")
    var path: String

    @Option(name: .shortAndLong, parsing: .singleValue, help: "A detector to measure alone (repeatable).")
    var detector: [String] = []

    @Option(parsing: .singleValue, help: "Measure the whole pipeline detecting every Nth frame (repeatable; default 1).")
    var detectEvery: [Int] = []

    @Option(help: "Minimum confidence (0...1).")
    var threshold = 0.5

    @Option(help: "Measure at most this many frames.")
    var frames: Int?

    @Option(help: ArgumentHelp("Resize decoded frames to WIDTHxHEIGHT first.", valueName: "WxH"))
    var resize: String?

    @Option(help: ArgumentHelp("Folder holding DockTrack's model files.", valueName: "dir"))
    var models: String?

    @Flag(help: "Skip the OpenCV-Python baseline.")
    var noPython = false

    @Flag(help: "Also measure the pipeline with adaptive detection (track --adaptive-detection).")
    var adaptive = false

    @Option(help: "The detector the pipelines run (see track --detector).")
    var pipelineDetector = "default"

    @Option(help: ArgumentHelp("Also replay the input as a live camera at this many frames per second (real time) through the pipeline with detection on its own thread (track --detect-async), and measure capture-to-command latency.", valueName: "fps"))
    var live: Double?

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be 1 or more") }
        if let resize, ImageSize(parsing: resize) == nil { throw ValidationError("--resize takes WIDTHxHEIGHT, e.g. 1280x720, not '\(resize)'") }
        if detectEvery.contains(where: { $0 < 1 }) { throw ValidationError("--detect-every must be 1 or more") }
    }


    static func padded(_ label: String) -> String {
        label.count >= 34 ? label + " " : label + String(repeating: " ", count: 34 - label.count)
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Peak resident memory in MB (VmHWM).
    static func peakMemory() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb / 1024
    }

    func run() throws {
        try reportingErrors {
            let target = resize.flatMap(ImageSize.init(parsing:))
            let store = ModelStore.locate(models: models)
            var source = try MediaFile.open(path)
            let info = source.info
            let limit = frames ?? info.frameCount ?? Int.max
            print("input: \(path) \(info.size), \(min(limit, info.frameCount ?? limit)) frames\(target.map { ", resized to \($0)" } ?? ""); OpenCV \(OpenCVRuntime.version), \(OpenCVRuntime.threads) threads")
            let baseline = noPython ? nil : pythonBaseline(store: store, frames: limit, size: target)
            if let baseline {
                print(Self.padded("baseline: OpenCV-Python res10") + String(format: "%9.1f fps", baseline))
            } else if !noPython {
                print(Self.padded("baseline: OpenCV-Python res10") + "  unavailable (python3 with cv2: apt-get install python3-opencv)")
            }
            // The pipelines first, so that their peak memory is not that of the frame cache below.
            for every in detectEvery.isEmpty ? [1] : detectEvery {
                try measurePipeline(detectEvery: every, store: store, limit: limit, size: target, baseline: baseline)
            }
            if adaptive { try measurePipeline(detectEvery: 0, store: store, limit: limit, size: target, baseline: baseline) }
            if let live { try measureLive(framesPerSecond: live, store: store, limit: limit, size: target) }
            // Decode pass: keeps the frames so every detector sees the same pictures.
            var images: [Image] = []
            var clock = ContinuousClock.now
            while images.count < limit, let frame = try source.nextFrame() {
                images.append(try target.map { size throws(OpenCVError) in try frame.image.resized(to: size) } ?? frame.image)
            }
            let decodeSeconds = ProgressLine.seconds(ContinuousClock.now - clock)
            print(Self.padded("decode\(target == nil ? "" : "+resize")") + String(format: "%9.1f fps", Double(images.count) / decodeSeconds))
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
                               Double(images.count) / latencies.reduce(0, +), percentile(latencies, 0.5) * 1000,
                               percentile(latencies, 0.99) * 1000, Double(observations) / Double(images.count)))
            }
        }
    }

    /// The whole pipeline over the file, decoding included, as `docktrack track` runs it;
    /// `detectEvery` 0 means adaptive detection.
    private func measurePipeline(detectEvery: Int, store: ModelStore, limit: Int, size: ImageSize?, baseline: Double?) throws {
        var source = try MediaFile.open(path)
        var params = TrackingPipeline.Params()
        params.detectEvery = max(1, detectEvery)
        params.adaptiveDetection = detectEvery == 0
        params.minimumConfidence = threshold
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make(pipelineDetector, models: store),
                                        cues: FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: store)), params: params)
        var controller = FramingController(params: FramingController.Params())
        var latencies: [Double] = []
        let cpu = Self.cpuSeconds(), started = ContinuousClock.now
        while latencies.count < limit, let decoded = try source.nextFrame() {
            let captured = ContinuousClock.now
            var frame = decoded
            if let size { frame.image = try frame.image.resized(to: size) }
            let subjects = try pipeline.process(frame)
            _ = controller.update(subjects: subjects, captureTime: frame.time, poseAtCapture: .zero, pose: .zero, now: frame.time)
            latencies.append(ProgressLine.seconds(ContinuousClock.now - captured))
        }
        let wall = ProgressLine.seconds(ContinuousClock.now - started)
        let fps = Double(latencies.count) / wall
        let ratio = baseline.map { String(format: "   %.2fx baseline", fps / $0) } ?? ""
        let label = detectEvery == 0 ? String(format: "pipeline, adaptive (%.0f%% detected)", 100 * Double(pipeline.detections) / Double(max(1, latencies.count)))
                                     : "pipeline, detect every \(detectEvery)"
        let named = pipelineDetector == "default" ? label : "\(label) (\(pipelineDetector))"
        print(Self.padded(named)
              + String(format: "%9.1f fps   p50 %6.1f ms   p99 %6.1f ms   cpu %5.1f ms/frame   peak %4.0f MB",
                       fps, percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000,
                       (Self.cpuSeconds() - cpu) / Double(latencies.count) * 1000, Self.peakMemory()) + ratio)
    }

    /// The input replayed in real time at `framesPerSecond`, as a camera delivers it (frames that
    /// arrive while the previous one is still being processed are passed over, newest wins), with
    /// detection on its own thread: latency from a frame's arrival to its command.
    private func measureLive(framesPerSecond: Double, store: ModelStore, limit: Int, size: ImageSize?) throws {
        var frames: [Image] = []
        var source = try MediaFile.open(path)
        while frames.count < min(limit, 600), let frame = try source.nextFrame() {
            frames.append(try size.map { size throws(OpenCVError) in try frame.image.resized(to: size) } ?? frame.image)
        }
        var params = TrackingPipeline.Params()
        params.asyncDetection = true
        params.minimumConfidence = threshold
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make(pipelineDetector, models: store),
                                        cues: FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: store)), params: params)
        var controller = FramingController(params: FramingController.Params())
        var latencies: [Double] = []
        var passedOver = 0
        let start = MonotonicClock.now()
        var next = 0
        while next < frames.count {
            let arrival = start + Double(next) / framesPerSecond
            let wait = arrival - MonotonicClock.now()
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            // The newest frame that has arrived by now.
            let newest = min(frames.count - 1, max(next, Int((MonotonicClock.now() - start) * framesPerSecond)))
            passedOver += newest - next
            let captured = start + Double(newest) / framesPerSecond
            let subjects = try pipeline.process(Frame(index: newest, time: captured - start, image: frames[newest]))
            _ = controller.update(subjects: subjects, captureTime: captured - start, poseAtCapture: .zero, pose: .zero, now: captured - start)
            latencies.append(MonotonicClock.now() - captured)
            next = newest + 1
        }
        let detected = pipeline.worker?.detectedFrames ?? 0
        print(Self.padded(String(format: "live %g fps, detection thread", framesPerSecond))
              + String(format: "%9.1f fps   p50 %6.1f ms   p99 %6.1f ms   %d frames passed over, %.1f detections/s",
                       Double(latencies.count) / (MonotonicClock.now() - start), percentile(latencies, 0.5) * 1000,
                       percentile(latencies, 0.99) * 1000, passedOver,
                       Double(detected) / (MonotonicClock.now() - start)))
    }

    /// Frames per second of the loop a user writes instead: OpenCV-Python, res10 on every frame.
    private func pythonBaseline(store: ModelStore, frames: Int, size: ImageSize?) -> Double? {
        let script = """
            import sys, time, cv2
            net = cv2.dnn.readNetFromCaffe(sys.argv[2], sys.argv[3])
            cap = cv2.VideoCapture(sys.argv[1])
            limit = int(sys.argv[4]); w, h = int(sys.argv[5]), int(sys.argv[6])
            n = 0; start = time.time()
            while n < limit:
                ok, frame = cap.read()
                if not ok: break
                if w > 0: frame = cv2.resize(frame, (w, h))
                net.setInput(cv2.dnn.blobFromImage(frame, 1.0, (300, 300), (104, 177, 123)))
                detections = net.forward()
                n += 1
            print(n / (time.time() - start))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "/usr/bin/env")
        let pythonArguments = ["-c", script, path, store.model("res10_300x300_ssd_deploy.prototxt"), store.model("res10_300x300_ssd_iter_140000.caffemodel"),
                               String(min(frames, 1_000_000)), String(size?.width ?? 0), String(size?.height ?? 0)]
        process.arguments = process.executableURL!.path.hasSuffix("env") ? ["python3"] + pythonArguments : pythonArguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
