import ArgumentParser
import DockTrack
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure decoding and detection speed on a video file.",
        discussion: """
            Decodes the file once without detecting, then runs each detector over the same frames \
            and prints frames per second and per-frame latency (p50, p99). With --resize the \
            decoded frames are resized before detection (e.g. 1280x720 for a 720p load); decoding \
            speed is then that of the original file plus the resize.
            """
    )

    @Argument(help: "A video file.")
    var path: String

    @Option(name: .shortAndLong, parsing: .singleValue, help: "A detector to measure (repeatable; default: default).")
    var detector: [String] = []

    @Option(help: "Minimum confidence (0...1).")
    var threshold = 0.5

    @Option(help: "Measure at most this many frames.")
    var frames: Int?

    @Option(help: ArgumentHelp("Resize decoded frames to WIDTHxHEIGHT before detection.", valueName: "WxH"))
    var resize: String?

    @Option(help: ArgumentHelp("Folder holding DockTrack's model files.", valueName: "dir"))
    var models: String?

    func validate() throws {
        if let frames, frames < 1 { throw ValidationError("--frames must be 1 or more") }
        if let resize, Self.parseSize(resize) == nil { throw ValidationError("--resize takes WIDTHxHEIGHT, e.g. 1280x720, not '\(resize)'") }
    }

    static func parseSize(_ text: String) -> ImageSize? {
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { return nil }
        return ImageSize(width: parts[0], height: parts[1])
    }

    static func padded(_ label: String) -> String {
        label.count >= 30 ? label + " " : label + String(repeating: " ", count: 30 - label.count)
    }

    func run() throws {
        try reportingErrors {
            let target = resize.flatMap(Self.parseSize)
            let store = ModelStore.locate(models: models)
            var source = try MediaFile.open(path)
            let info = source.info
            // Decode pass: also keeps the frames so every detector sees the same pictures.
            var images: [Image] = []
            var clock = ContinuousClock.now
            while frames.map({ images.count < $0 }) ?? true, let frame = try source.nextFrame() {
                images.append(try target.map { size throws(OpenCVError) in try frame.image.resized(to: size) } ?? frame.image)
            }
            let decodeSeconds = ProgressLine.seconds(ContinuousClock.now - clock)
            print("input: \(path) \(info.size), \(images.count) frames measured\(target.map { ", resized to \($0)" } ?? "")")
            print("opencv: \(OpenCVRuntime.version), \(OpenCVRuntime.threads) threads")
            print(Self.padded("decode\(target == nil ? "" : "+resize")") + String(format: "%9.1f fps", Double(images.count) / decodeSeconds))
            for name in detector.isEmpty ? ["default"] : detector {
                let detector = try DetectorCatalog.make(name, models: store)
                var latencies: [Double] = []
                var observations = 0
                _ = try detector.detect(in: images[0], minimumConfidence: threshold)  // warm-up: allocations, first inference
                for image in images {
                    clock = ContinuousClock.now
                    observations += try detector.detect(in: image, minimumConfidence: threshold).count
                    latencies.append(ProgressLine.seconds(ContinuousClock.now - clock))
                }
                let total = latencies.reduce(0, +)
                let sorted = latencies.sorted()
                func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000 }
                print(Self.padded(name == detector.name ? name : "\(name) (\(detector.name))")
                      + String(format: "%9.1f fps   p50 %6.1f ms   p99 %6.1f ms   %.2f observations/frame", Double(images.count) / total,
                             percentile(0.5), percentile(0.99), Double(observations) / Double(images.count)))
            }
        }
    }
}
