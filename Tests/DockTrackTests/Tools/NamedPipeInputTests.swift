import DockTrack
import Foundation
import Testing

/// A FIFO given as input: the run says it waits for a writer, one SIGINT or SIGTERM ends the
/// wait (a systemd stop does not need SIGKILL), and a writer that comes is read as a stream.
@Suite(.onTestThreads) struct NamedPipeInputTests {
    /// A new FIFO in a folder of its own.
    static func fifo() throws -> String {
        let path = try Fixtures.temporaryFolder().appendingPathComponent("input.avi").path
        try #require(mkfifo(path, 0o600) == 0)
        return path
    }

    /// Starts docktrack with `arguments`, stderr to a file; the pid and that file.
    static func start(_ arguments: [String]) throws -> (pid: pid_t, stderr: String, stdout: String) {
        let folder = try Fixtures.temporaryFolder()
        let stderr = folder.appendingPathComponent("stderr").path, stdout = folder.appendingPathComponent("stdout").path
        let err = open(stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600), out = open(stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(err); close(out) }
        return (try ToolRun.spawn(Fixtures.tool, arguments, stdout: out, stderr: err).get(), stderr, stdout)
    }

    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Waits up to 60 s (a busy machine) for `condition`.
    static func waitFor(_ condition: () -> Bool) -> Bool {
        waitWhile(atMost: .seconds(60), every: .milliseconds(20)) { !condition() }
    }

    @Test(arguments: [(["track"], SIGINT), (["detect"], SIGTERM), (["vad"], SIGINT), (["reframe", "OUT"], SIGTERM)])
    func aStopEndsTheWaitForAWriter(command: [String], signal: Int32) throws {
        let fifo = try Self.fifo()
        let output = fifo + ".out.mp4"
        let arguments = [command[0], fifo] + command.dropFirst().map { $0 == "OUT" ? output : $0 }
        let run = try Self.start(arguments)
        let waiting = Self.waitFor { Self.text(run.stderr).contains("is a FIFO: waiting for a writer") }
        #expect(waiting, "\(arguments): \(Self.text(run.stderr))")
        kill(run.pid, signal)
        let status = ToolRun.wait(for: run.pid)
        #expect(status == 128 + signal, "\(arguments): exit \(status), \(Self.text(run.stderr))")
        #expect(!FileManager.default.fileExists(atPath: output), "no output begun")
    }

    @Test func aWriterThatComesIsReadAsAStream() throws {
        let fifo = try Self.fifo()
        // Every frame read (the writer is never left without its reader), every 20th detected
        // (by res10: Haar's three cascades took 35 s of processor for the 40 frames).
        let run = try Self.start(["detect", fifo, "-d", "dnn-face", "--summary", "--stride", "20"])
        #expect(Self.waitFor { Self.text(run.stderr).contains("waiting for a writer") })
        // Written as a producer would: the whole of vtest.avi, then the pipe closed.
        let writer = Thread {
            guard let data = FileManager.default.contents(atPath: Fixtures.sample("vtest.avi")), let handle = FileHandle(forWritingAtPath: fifo) else { return }
            try? handle.write(contentsOf: data)
            try? handle.close()
        }
        writer.start()
        let status = ToolRun.wait(for: run.pid)
        #expect(status == 0, "\(Self.text(run.stderr))")
        #expect(Self.text(run.stdout).split(separator: "\n").count == 40, "a line for each 20th of the 795 frames")
    }
}
