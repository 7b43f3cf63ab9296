import DockTrack
import Foundation
import Testing

/// The built `docktrack` tool, run as a user runs it.
@Suite struct CommandLineTests {
    @Test func detectPrintsOneJSONLinePerFrame() throws {
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--end", "30", "--stride", "10", "-d", "hog-body"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 3)
        let records = try run.lines.map { try JSONDecoder().decode(DetectionRecord.self, from: Data($0.utf8)) }
        #expect(records.map(\.frame) == [0, 10, 20])
        #expect(records.map(\.time) == [0, 1, 2])
        #expect(records.allSatisfy { $0.size == ImageSize(width: 768, height: 576) })
        #expect(records.allSatisfy { !$0.observations.isEmpty && $0.observations.allSatisfy { $0.type == .humanBody } })
        #expect(run.stderr.isEmpty)
    }

    @Test func detectOnAnImageFindsTheFace() throws {
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg")])
        #expect(run.status == 0)
        let line = try #require(run.lines.first)
        #expect(line.hasPrefix(#"{"frame":0,"time":0.0,"width":548,"height":342,"observations":[{"type":"humanFace","rect":{"x":0.41"#))
        #expect(run.lines.count == 1)
    }

    @Test func thresholdFiltersObservations() throws {
        let loose = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--start", "100", "--end", "101", "-d", "hog-body", "--threshold", "0.1"])
        let strict = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--start", "100", "--end", "101", "-d", "hog-body", "--threshold", "0.99"])
        let count = { (run: ToolRun) in try JSONDecoder().decode(DetectionRecord.self, from: Data(run.lines[0].utf8)).observations.count }
        #expect(try count(loose) > count(strict))
    }

    @Test func aMissingFileIsOneLineAndAFailure() throws {
        let run = try ToolRun.docktrack(["detect", "/nonexistent/clip.mp4"])
        #expect(run.status == 1)
        #expect(run.errorLines == ["docktrack: /nonexistent/clip.mp4: no such file"])
        #expect(run.stdout.isEmpty)
    }

    @Test func aFileThatIsNotAVideoIsOneLineAndAFailure() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = folder.appendingPathComponent("notes.avi").path
        try "hello".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["detect", path])
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.stderr.contains("\(path): cannot be read"))
    }

    @Test func aTruncatedVideoKeepsWhatWasPrintedAndSaysWhereItStopped() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = try Fixtures.truncatedCopy(of: "vtest.avi", bytes: 4_000_000, in: folder)
        let run = try ToolRun.docktrack(["detect", path, "--stride", "50", "-d", "lbp-face"])
        #expect(run.status == 1)
        #expect(run.lines.count >= 7, "lines printed before the break: \(run.lines.count)")
        #expect(run.errorLines.count == 1)
        #expect(run.stderr.contains("video ends early, after"), "\(run.stderr)")
        #expect(run.stderr.contains("of the 795 frames it claims"))
    }

    @Test func anUnknownDetectorIsNamed() throws {
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "-d", "yolo"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("unknown detector 'yolo'"))
        #expect(run.stderr.contains("dnn-face"))
    }

    @Test func aMissingModelFolderIsNamed() throws {
        let empty = try Fixtures.temporaryFolder()
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "--models", empty.path])
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.stderr.contains("model file not found: \(empty.path)/res10_300x300_ssd_deploy.prototxt"))
    }

    @Test func badOptionsAreUsageErrors() throws {
        for arguments in [["--threshold", "1.5"], ["--stride", "0"], ["--start", "5", "--end", "2"]] {
            let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg")] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.status)")
            #expect(run.stderr.contains("Error:"), "\(arguments)")
        }
    }

    @Test func helpListsTheDetectors() throws {
        let run = try ToolRun.docktrack(["detect", "--help"])
        #expect(run.status == 0)
        for name in DetectorCatalog.names { #expect(run.stdout.contains(name)) }
        #expect(run.stdout.contains("lower-left"))
    }

    @Test func annotatedVideoHasTheInputsSizeAndFrames() throws {
        let folder = try Fixtures.temporaryFolder()
        let out = folder.appendingPathComponent("annotated.mp4").path
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--end", "12", "-d", "hog-body", "--annotate", out])
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try Fixtures.frames(of: out)
        #expect(frames.count == 12)
        #expect(frames.first?.size == ImageSize(width: 768, height: 576))
    }
}
