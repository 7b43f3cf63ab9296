import DockTrack
import DockTrackSystem
import Foundation
import Testing

/// Small text files given by a user are read with the real reason when they cannot be: a FIFO
/// is not waited on, a folder or a binary file is not "no such file".
@Suite(.onTestThreads) struct SmallTextFileTests {
    @Test func eachKindOfFileThatIsNoTextSaysWhatItIs() throws {
        let folder = try Fixtures.temporaryFolder().path
        let fifo = "\(folder)/pipe"
        try #require(mkfifo(fifo, 0o600) == 0)
        let large = "\(folder)/large.txt"
        try String(repeating: "a", count: 2000).write(toFile: large, atomically: true, encoding: .utf8)
        let binary = "\(folder)/binary.txt"
        try Data([0xFF, 0xD8, 0x00, 0x41]).write(to: URL(fileURLWithPath: binary))
        let text = "\(folder)/labels.txt"
        try "1,1,10,10,5,5\n".write(toFile: text, atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [("\(folder)/missing", "no such file"), (folder, "a directory, not a file"),
                                         (fifo, "a FIFO (named pipe), not a file"), ("/dev/null", "a device or socket, not a file"),
                                         (binary, "not text (binary or not UTF-8)"), (large, "larger than 1000 bytes")]
        for (path, reason) in cases {
            #expect(throws: SmallTextFile.Unreadable(reason: reason), "\(path)") { try SmallTextFile.read(path, largest: 1000) }
        }
        #expect(try SmallTextFile.read(text, largest: 1000) == "1,1,10,10,5,5\n")
    }

    @Test func evalNamesTheRealCauseOfLabelsItCannotRead() throws {
        let folder = try Fixtures.temporaryFolder().path
        let fifo = "\(folder)/labels.txt"
        try #require(mkfifo(fifo, 0o600) == 0)
        for (labels, reason) in [(fifo, "a FIFO"), (folder, "a directory"), (Fixtures.sample("messi5.jpg"), "not text")] {
            let run = try ToolRun.docktrack(["eval", "--clip", Fixtures.sample("carphone_pristine.mp4"), "--mot", labels])
            #expect(run.status == 1 && run.stderr.contains(reason) && !run.stderr.contains("no such file"), "\(labels): \(run.stderr)")
        }
    }
}
