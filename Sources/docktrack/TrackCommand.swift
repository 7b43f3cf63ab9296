import ArgumentParser
import DockTrack
import Foundation

struct TrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Track and rank the people (and chosen objects) in a video; write their states as JSON Lines.",
        discussion: """
            Each line of --states: {"frame":12,"time":0.4,"subjects":[{"identifier":"…UUID…","kind":"person",\
            "rect":{"x":…,"y":…,"width":…,"height":…},"saliencyRank":1,"speakingConfidence":0.8,\
            "lookingAtCameraConfidence":0.9,"faceRect":{…}}]}
            Subjects are ordered by saliencyRank (1 = most salient). kind is person or object; \
            rects are unit coordinates with the origin at the lower-left; the confidences are 0...1, \
            or null when the person's face is not seen; faceRect is present when it is.
            """
    )

    @Argument(help: "A video file (or an image: one frame).")
    var path: String

    @OptionGroup var detection: DetectorOptions
    @OptionGroup var frames: FrameOptions

    @Option(help: ArgumentHelp("Write subject states here, one JSON line per frame ('-': stdout).", valueName: "file"))
    var states = "-"

    @Option(help: "Run the detector on every Nth processed frame; subjects move by their motion model between.")
    var detectEvery = 1

    @Option(parsing: .singleValue, help: ArgumentHelp(
        "Also track the object in this box on the first processed frame: x,y,width,height in unit coordinates, origin at the upper-left (as read off the picture). Repeatable.",
        valueName: "x,y,w,h"))
    var object: [String] = []

    @Flag(help: "Do not read speaking and looking-at-camera cues from faces (faster).")
    var noFaceCues = false

    @Flag(help: "Number identifiers 00000000-0000-0000-0000-000000000001, ... instead of random UUIDs (reproducible output).")
    var sequentialIdentifiers = false

    @Option(help: ArgumentHelp("Also write the video with subjects drawn on it (.mp4, .avi).", valueName: "file"))
    var annotate: String?

    @Flag(help: "Print a summary to stderr at the end.")
    var summary = false

    func validate() throws {
        guard detectEvery >= 1 else { throw ValidationError("--detect-every must be 1 or more") }
        for box in object where Self.parseBox(box) == nil {
            throw ValidationError("--object takes x,y,width,height in 0...1 with width and height > 0, not '\(box)'")
        }
    }

    /// A box given as x,y,w,h with the origin at the upper-left, as a UnitRect (lower-left origin).
    static func parseBox(_ text: String) -> UnitRect? {
        let values = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard values.count == 4, values.allSatisfy({ (0...1).contains($0) }), values[2] > 0, values[3] > 0,
              values[0] + values[2] <= 1.0001, values[1] + values[3] <= 1.0001 else { return nil }
        return UnitRect(upperLeftOrigin: UnitRect(x: values[0], y: values[1], width: values[2], height: values[3]))
    }

    func run() throws {
        try reportingErrors {
            var source = try MediaFile.open(path)
            let detector = try detection.makeDetector()
            let models = ModelStore.locate(models: detection.models, cascades: detection.cascades)
            let cues = noFaceCues ? nil : FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models))
            var params = TrackingPipeline.Params()
            params.detectEvery = detectEvery
            params.minimumConfidence = detection.threshold
            let pipeline = TrackingPipeline(detector: detector, cues: cues, params: params,
                                            identifiers: sequentialIdentifiers ? .sequential : .random)
            let output = try LineOutput(path: states)
            let video = try annotate.map { path throws in
                try AnnotatedOutput(path: path, size: source.info.size, framesPerSecond: (source.info.framesPerSecond ?? 30) / Double(frames.stride))
            }
            var progress = ProgressLine(total: source.info.frameCount.map { max(0, (min($0, frames.end ?? $0) - frames.start + frames.stride - 1) / frames.stride) })
            defer { progress.finish() }
            var count = 0
            let started = ContinuousClock.now
            var objectsStarted = object.isEmpty
            try frames.selection.forEachFrame(of: &source) { frame in
                if !objectsStarted {
                    for box in object { try pipeline.track(objectAt: Self.parseBox(box)!, in: frame) }
                    objectsStarted = true
                }
                let subjects = try pipeline.process(frame)
                try output.write(SubjectStatesRecord(frame: frame.index, time: frame.time, subjects: subjects).jsonLine)
                if let video {
                    let canvas = try Canvas(copying: frame.image)
                    canvas.subjects(subjects)
                    try video.write(canvas.image)
                }
                count += 1
                progress.update(done: count)
            }
            if summary {
                let seconds = ProgressLine.seconds(ContinuousClock.now - started)
                printError(String(format: "docktrack: %d frames, %.2f s, %.1f frames per second", count, seconds, Double(count) / max(seconds, 1e-9)))
            }
            if let video { printError("docktrack: annotated output written to \(video.path)") }
        }
    }
}

/// Where JSON lines go: stdout ("-") or a file, each line written as soon as it is made.
final class LineOutput {
    private let handle: FileHandle

    init(path: String) throws {
        if path == "-" {
            handle = .standardOutput
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw ToolError("\(path): cannot be written")
        }
        self.handle = handle
    }

    func write(_ line: String) throws {
        try handle.write(contentsOf: Data((line + "\n").utf8))
    }
}
