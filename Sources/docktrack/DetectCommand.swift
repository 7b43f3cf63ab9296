import ArgumentParser
import DockTrack
import Foundation

struct DetectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Detect faces and people in a video or image; print one JSON line per frame.",
        discussion: """
            Each line: {"frame":0,"time":0.0,"width":768,"height":576,"observations":\
            [{"type":"humanFace","rect":{"x":0.41,"y":0.62,"width":0.08,"height":0.11},"confidence":0.97}]}
            frame: index in the input; time: seconds from its start; rect: unit coordinates, \
            origin at the lower-left; type: humanFace, humanBody or object. An image is one frame.
            """
    )

    @Argument(help: "A video file (mp4, avi, mov, ...) or an image (jpg, png, ...).")
    var path: String

    @OptionGroup var detection: DetectorOptions
    @OptionGroup var frames: FrameOptions

    @OptionGroup var annotate: AnnotateOption

    @Flag(help: "Print a summary (frames, observations, frames per second) to stderr at the end.")
    var summary = false

    func run() throws {
        try reportingErrors {
            var source = try MediaFile.open(path)
            let detector = try detection.makeDetector()
            let output = try annotate.video(size: source.info.size, framesPerSecond: (source.info.framesPerSecond ?? 30) / Double(frames.stride))
            let run = DetectionRun(minimumConfidence: detection.threshold, selection: frames.selection)
            var progress = ProgressLine(total: source.info.frameCount.map { frames.selection.count(of: $0) })
            var count = 0, observed = 0
            let started = ContinuousClock.now
            defer { progress.finish() }
            try run.run(source: &source, detector: detector) { record, frame in
                try printLine(record.jsonLine)
                if let output {
                    let canvas = try Canvas(copying: frame.image)
                    canvas.observations(record.observations)
                    try output.write(canvas.image)
                }
                count += 1
                observed += record.observations.count
                progress.update(done: count)
            }
            if summary {
                let seconds = ProgressLine.seconds(ContinuousClock.now - started)
                printError(String(format: "docktrack: %d frames, %d observations, %.2f s, %.1f frames per second (%@)",
                                  count, observed, seconds, seconds > 0 ? Double(count) / seconds : 0, detector.name))
            }
            if let output { printError("docktrack: annotated output written to \(output.path)") }
        }
    }
}
