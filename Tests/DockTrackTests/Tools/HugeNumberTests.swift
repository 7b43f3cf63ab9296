import DockTrack
import Foundation
import Testing

/// Numbers a careless or hostile user gives: huge, negative, not finite. Each is a clear error
/// (or, in a file, a gap or one refused line), never a trap (exit 132) or a silent success.
@Suite(.onTestThreads) struct HugeNumberTests {
    static let huge = "9223372036854775807"

    @Test(arguments: [
        ["track", "CLIP", "--stride", huge], ["track", "CLIP", "--detect-every", huge], ["reframe", "CLIP", "OUT", "--detect-every", huge],
        ["bench", "CLIP", "--no-python", "--detect-every", huge], ["detect", "CLIP", "--stride", huge], ["detect", "CLIP", "--stride=-3"],
        ["eval", "--clip", "CLIP", "--mot", "MOT", "--detect-every", huge], ["step-response", "--step", "nan"], ["step-response", "--latency", "inf"],
    ])
    func aHugeOrNonFiniteOptionIsAUsageError(arguments: [String]) throws {
        let folder = try Fixtures.temporaryFolder().path
        let filled = arguments.map { argument in
            switch argument {
            case "CLIP": Fixtures.sample("carphone_pristine.mp4")
            case "MOT": Fixtures.sample("labels/carphone.mot.txt")
            case "OUT": "\(folder)/out.mp4"
            default: argument
            }
        }
        let run = try ToolRun.docktrack(filled)
        #expect(run.status == 64, "\(filled): exit \(run.status), \(run.stderr)")
        #expect(run.stderr.contains("must be"), "\(run.stderr)")
    }

    @Test func docksimRefusesADurationThatIsNoNumber() throws {
        let run = try ToolRun.run(DockSimTests.docksim, ["--duration", "nan"])
        #expect(run.status == 64 && run.stderr.contains("--duration must be"), "exit \(run.status), \(run.stderr)")
    }

    @Test func aTraceWithHugeOrMissingValuesIsPlottedWithGaps() throws {
        let folder = try Fixtures.temporaryFolder().path
        let trace = "\(folder)/trace.tsv"
        try "time\tpan\ttilt\n0\t0.1\tinf\n0.5\t1e308\t0.2\n1\tnan\t-1e300\n1.5\t0.2\t0.1\n".write(toFile: trace, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["plot", trace])
        #expect(run.status == 0, "\(run.stderr)")
        let picture = try Image(contentsOf: "\(folder)/trace.png")
        #expect(picture.width == 960 && picture.height > 180)
    }

    @Test(arguments: [("time\tpan\n0\t1\nnan\t2\n", "is not a number of seconds"), ("time\tpan\n1\t1\n0\t2\n", "time goes backwards"),
                      ("time\tpan\n1e308\t1\n2e308\t2\n", "is not a number of seconds")])
    func aTraceWhoseTimeIsNoTimeIsRefused(text: String, message: String) throws {
        let trace = try Fixtures.temporaryFolder().appendingPathComponent("trace.tsv").path
        try text.write(toFile: trace, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["plot", trace])
        #expect(run.status == 1 && run.stderr.contains(message), "exit \(run.status), \(run.stderr)")
    }

    /// 10,000 boxes on one line (under the 1 MiB line cap) took 23 s and 1.8 GB: the line is
    /// refused, the others tracked.
    @Test func aFrameWithTooManyObservationsIsRefused() throws {
        let many = (0..<10_000).map { i in
            #"{"type":"humanBody","rect":{"x":\#(Double(i % 100) / 100),"y":0.1,"width":0.01,"height":0.05},"confidence":0.9}"#
        }.joined(separator: ",")
        let two = #"{"type":"humanBody","rect":{"x":0.4,"y":0.1,"width":0.1,"height":0.5},"confidence":0.9}"#
        let lines = (0..<3).map { f in #"{"frame":\#(f),"time":\#(Double(f) / 30),"width":640,"height":480,"observations":[\#(f == 1 ? many : two)]}"# }
        let file = try Fixtures.temporaryFolder().appendingPathComponent("observations.jsonl").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["track", "--observations", file])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("line 2") && run.stderr.contains("at most \(Observation.mostInOneFrame) observations"), "\(run.stderr)")
        let request = try? JSONDecoder().decode(TrackingRequest.self, from: Data(#"{"command":"track","observations":[\#(many)]}"#.utf8))
        #expect(request == nil, "a track request with 10,000 observations is refused")
    }
}
