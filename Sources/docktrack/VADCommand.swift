import ArgumentParser
import DockTrack
import Foundation

struct VADCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vad",
        abstract: "Print the voice activity segments of an audio or video file's sound.",
        discussion: """
            stdout: one JSON line per speech segment, {"start":1.02,"end":2.35} (seconds from the \
            start of the stream). With --windows, one line per 10 ms window instead: \
            {"time":1.025,"probability":0.83,"speech":true,"level":-31.2}. The audio is decoded \
            with FFmpeg (any container and codec it reads), mixed to mono and resampled to 16 kHz.
            """
    )

    @Argument(help: "An audio or video file with sound.")
    var path: String

    @Flag(help: "Print every 10 ms window's probability and decision instead of segments.")
    var windows = false

    @Option(help: "Decision threshold on the smoothed speech probability (0...1).")
    var threshold = 0.3

    func validate() throws {
        guard (0...1).contains(threshold) else { throw ValidationError("--threshold must be between 0 and 1") }
    }

    func run() throws {
        do {
            let source = try AudioFileSource(path: path)
            var params = VoiceActivityDetector.Params()
            params.threshold = threshold
            var detector = VoiceActivityDetector(params: params)
            var all: [VoiceActivity] = []
            var end = 0.0
            // What the file claims to last: its audio track's duration, or its video's frame
            // count over its rate (what an AVI's header says even when the file was cut short).
            let video = (try? MediaFile.open(path))?.info
            let claimed = max(source.duration, video.flatMap { info in info.frameCount.flatMap { n in info.framesPerSecond.map { Double(n) / $0 } } } ?? 0)
            defer {
                // A file that claims more sound than it holds is truncated or corrupt: say so.
                if claimed > 0 && end < claimed - max(1, 0.05 * claimed) {
                    printError("docktrack: warning: \(path): the sound ends at \(String(format: "%.1f", end)) s of the \(String(format: "%.1f", claimed)) s the file claims (truncated or corrupt file)")
                }
            }
            while let chunk = try source.read(maximum: 16_000) {
                end = chunk.startTime + Double(chunk.samples.count) / Double(source.sampleRate)
                let results = detector.process(chunk)
                if windows {
                    for w in results {
                        var line = JSONLine()
                        line.add("time", w.time, digits: 3)
                        line.add("probability", w.probability, digits: 3)
                        line.add("speech", w.isSpeech)
                        line.add("level", w.level, digits: 1)
                        try printLine(line.text)
                    }
                }
                all += results
            }
            guard !windows else { return }
            for segment in VoiceActivityDetector.segments(all) {
                var line = JSONLine()
                line.add("start", segment.start, digits: 2)
                line.add("end", segment.end, digits: 2)
                try printLine(line.text)
            }
        } catch {
            printError("docktrack: \(error)")
            throw ExitCode.failure
        }
    }
}
