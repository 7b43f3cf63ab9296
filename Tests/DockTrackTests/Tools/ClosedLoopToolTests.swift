import DockTrack
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `simulate` and `track` with a dock: a person the first view does not show, and the loop across
/// processes with docksim.
@Suite(.onTestThreads) struct ClosedLoopToolTests {
    /// A wide scene whose only person starts outside the first view: samples/carphone_pristine.mp4
    /// (176x144) near the top-left corner of a black 704x576 canvas (at 60,60), 15 fps, the clip
    /// played three times (12 s: the search finds him in under 2, the framing is judged on the rest). With --zoom 0.4 the first view (the middle 40%) does not show the face,
    /// and the dock can turn far enough to frame it.
    static func cornerScene(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("corner.avi").path
        // The writer finishes the file when it goes (at the end of this function).
        let output = try AnnotatedOutput(path: path, size: ImageSize(width: 704, height: 576), framesPerSecond: 15)
        defer { withExtendedLifetime(output) {} }
        for _ in 0..<3 {
            var source = try MediaFile.open(Fixtures.sample("carphone_pristine.mp4"))
            var index = 0
            while let frame = try source.nextFrame() {
                defer { index += 1 }
                guard index % 2 == 0 else { continue }
                try output.write(try frame.image.cropped(to: PixelRect(x: -60, y: -60, width: 704, height: 576), size: ImageSize(width: 704, height: 576)))
            }
        }
        return path
    }

    static func metrics(_ run: ToolRun) throws -> [String: Double] {
        let line = try #require(run.lines.last, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double])
    }

    @Test func simulateFindsAPersonOutsideTheFirstViewAndFramesThem() throws {
        let folder = try Fixtures.temporaryFolder()
        let scene = try Self.cornerScene(in: folder)
        let trace = folder.appendingPathComponent("trace.tsv").path
        let run = try ToolRun.docktrack(["simulate", scene, "--zoom", "0.4", "--trace", trace, "--no-face-cues"])
        #expect(run.status == 0, "\(run.stderr)")
        let m = try Self.metrics(run)
        let states = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").dropFirst().map { $0.split(separator: "\t").last! }
        #expect(states.first == "searching" || states.prefix(20).contains("searching"), "nobody in the first view: a search")
        let found = try #require(states.firstIndex(of: "tracking"), "the person was found")
        // The sweep: the top row first (where the face is), end to end. Before the top row came
        // first and the sweep went twice as fast, this took 12 s.
        #expect(Double(found) / 15 < 7, "found after \(Double(found) / 15) s")
        #expect(m["framesWithSubject"]! >= Double(states.count - found) * 0.8, "\(m)")
        #expect(m["inTargetZone"]! >= 0.8, "\(m); \(run.errorLines.last ?? "")")
        print("corner scene: \(run.errorLines.last ?? ""), found at \(Double(found) / 15) s; \(run.stdout)")

        // Without the search the dock never turns to them.
        let still = try ToolRun.docktrack(["simulate", scene, "--zoom", "0.4", "--no-search", "--no-face-cues", "--end", "60"])
        #expect(try Self.metrics(still)["framesWithSubject"] == 0, "\(still.stdout)")
    }

    @Test func simulateAcrossProcessesFollowsTheDockDocksimReports() throws {
        let folder = try Fixtures.temporaryFolder()
        let trace = folder.appendingPathComponent("dock.tsv").path
        let docksim = try DocksimProcess(["--trace", trace])
        defer { withExtendedLifetime(docksim) {} }
        let socket = docksim.socket
        let view = folder.appendingPathComponent("view.tsv").path
        let run = try ToolRun.docktrack(["simulate", Fixtures.sample("vtest.avi"), "--end", "80", "--dock", "unix:\(socket)", "--no-face-cues",
                                         "--trace", view])
        #expect(run.status == 0, "\(run.stderr)")
        let m = try Self.metrics(run)
        #expect(m["frames"] == 80 && m["framesWithSubject"]! >= 60, "\(m)")
        // The dock in the other process turned (its trace: time, pan, tilt, ...), and stayed in the scene's range (±22.5°).
        func pans(_ path: String) throws -> [Double] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().compactMap { Double($0.split(separator: "\t")[1]) }
        }
        let docked = try pans(trace)
        #expect((docked.map(abs).max() ?? 0) > 0.05, "docksim's dock turned: \(docked.suffix(5))")
        #expect(docked.allSatisfy { abs($0) <= 22.5 * .pi / 180 + 1e-3 }, "the scene's limits reached the other dock")
        // simulate's view is where docksim says its dock points: the view of the last frame is a
        // pose docksim's dock passed through near the end (its trace has a line per request, a
        // request a frame). Not docksim's last line: the dock goes on turning between the last
        // frame's capture and the run's stop, further on a busy machine (0.023 rad in one CI run).
        let seen = try pans(view)
        let viewEnd = try #require(seen.last)
        let path = Array(docked.suffix(20))
        let passed = zip(path, path.dropFirst()).contains { a, b in
            viewEnd >= min(a, b) - 0.005 && viewEnd <= max(a, b) + 0.005
        }
        #expect(passed, "simulate's view ends at pan \(viewEnd); docksim's dock over its last requests: \(path)")
    }

    @Test func aBadDockAddressIsAUsageError() throws {
        let run = try ToolRun.docktrack(["simulate", Fixtures.sample("vtest.avi"), "--dock", "tcp:1.2.3.4"])
        #expect(run.status == 64 && run.stderr.contains("not a dock address"), "\(run.stderr)")
        let absent = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--dock", "unix:/tmp/no-such-dock.sock", "--end", "3"])
        #expect(absent.status != 0 && absent.stderr.contains("no dock answers there"), "\(absent.stderr)")
    }
}
