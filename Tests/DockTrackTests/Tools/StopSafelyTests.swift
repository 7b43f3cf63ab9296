import DockTrack
import DockTrackTestKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every run ends with the dock still and its files whole: outputs are written in place and
/// never over an input, write errors are one line, a signal finishes the outputs, and the dock
/// is told to stop at every end.
@Suite(.onTestThreads) struct StopSafelyTests {
    /// A copy of vtest.avi in a fresh folder (tests that could harm their input use a copy).
    static func inputCopy() throws -> (folder: URL, input: String) {
        let folder = try Fixtures.temporaryFolder()
        let input = folder.appendingPathComponent("in.avi").path
        try FileManager.default.copyItem(atPath: Fixtures.sample("vtest.avi"), toPath: input)
        return (folder, input)
    }

    static func kind(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    /// Frames a video decodes to, to its end.
    static func decodedFrames(_ path: String) throws -> Int {
        var source = try MediaFile.open(path)
        var count = 0
        while try source.nextFrame() != nil { count += 1 }
        return count
    }

    @Test func outputsAreWrittenInPlaceThroughSymlinksAndDevices() throws {
        let folder = try Fixtures.temporaryFolder()
        // A symlink is written through and stays a symlink.
        let target = folder.appendingPathComponent("states.jsonl").path
        let link = folder.appendingPathComponent("link.jsonl").path
        #expect(FileManager.default.createFile(atPath: target, contents: Data("old\n".utf8)))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let run = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "5", "-d", "hog-body-fast", "--states", link])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(Self.kind(link) == S_IFLNK, "the symlink was replaced")
        let written = try String(contentsOfFile: target, encoding: .utf8).split(separator: "\n")
        #expect(written.count == 5 && written.allSatisfy { $0.hasPrefix("{\"frame\"") }, "\(written)")
        // A device node stays a device (a private one, like /dev/null: writes vanish).
        let node = folder.appendingPathComponent("null").path
        if mknod(node, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 {  // major 1, minor 3 (glibc's makedev)
            for option in ["--states", "--trace"] {
                let run = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "3", "-d", "hog-body-fast", option, node])
                #expect(run.status == 0, "\(option): \(run.stderr)")
                #expect(Self.kind(node) == S_IFCHR, "\(option) turned the device node into a file")
            }
        } else {
            print("mknod not permitted here (\(String(cString: strerror(errno)))): the device case is checked by the FIFO below")
        }
        // A FIFO stays a FIFO, and its reader gets the lines.
        let fifo = folder.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // The reader's bytes are handed over through the semaphore (which orders the write before the read).
        nonisolated(unsafe) var read = Data()
        let finished = DispatchSemaphore(value: 0)
        let reader = Thread {
            read = FileHandle(forReadingAtPath: fifo)!.readDataToEndOfFile()
            finished.signal()
        }
        reader.start()
        let piped = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "4", "-d", "hog-body-fast", "--states", fifo])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(finished.wait(timeout: .now() + 10) == .success, "the FIFO's reader got to its end")
        #expect(Self.kind(fifo) == S_IFIFO)
        #expect(String(decoding: read, as: UTF8.self).split(separator: "\n").count == 4)
    }

    @Test func noOutputIsWrittenOverAnInput() throws {
        let (folder, input) = try Self.inputCopy()
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        let link = folder.appendingPathComponent("another-name.avi").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        let cases: [[String]] = [
            ["track", input, "--end", "3", "--annotate", input],
            ["track", input, "--end", "3", "--states", input],
            ["track", input, "--end", "3", "--trace", link],
            ["simulate", input, "--end", "3", "--annotate", link],
            ["detect", input, "--end", "2", "--annotate", input],
        ]
        for arguments in cases {
            let run = try ToolRun.docktrack(arguments + ["-d", "hog-body-fast"])
            #expect(run.status == 1, "\(arguments): \(run.status) \(run.stderr)")
            #expect(run.errorLines.last?.hasPrefix("docktrack: cannot write") == true
                    && run.errorLines.last?.contains("this run's input") == true, "\(arguments): \(run.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == original, "\(arguments) changed the input")
        }
    }

    /// stdout on a full disk: one line naming it, exit 1, for every command that prints.
    @Test func aFullDiskIsOneLineAndAFailure() throws {
        let folder = try Fixtures.temporaryFolder()
        let full = open("/dev/full", O_WRONLY)
        try #require(full >= 0)
        defer { close(full) }
        let cases: [[String]] = [
            ["detect", Fixtures.sample("messi5.jpg")],
            ["simulate", Fixtures.sample("vtest.avi"), "--end", "3", "-d", "hog-body-fast"],
            ["step-response"],
            ["eval", Fixtures.sample("faces/testing.xml"), "-d", "haar-face"],
            ["track", Fixtures.sample("vtest.avi"), "--end", "3", "-d", "hog-body-fast"],
        ]
        for (i, arguments) in cases.enumerated() {
            let errors = folder.appendingPathComponent("err\(i)").path
            let errorFile = open(errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            let pid = try ToolRun.spawn(Fixtures.tool, arguments, stdout: full, stderr: errorFile).get()
            close(errorFile)
            let status = ToolRun.wait(for: pid)
            let message = try String(contentsOfFile: errors, encoding: .utf8)
            #expect(status == 1, "\(arguments): exit \(status), \(message)")
            #expect(message.hasSuffix("docktrack: cannot write standard output: No space left on device\n"), "\(arguments): \(message)")
        }
        let states = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "3", "-d", "hog-body-fast", "--states", "/dev/full"])
        #expect(states.status == 1 && states.errorLines.last == "docktrack: cannot write /dev/full: No space left on device", "\(states.stderr)")
        #expect(Self.kind("/dev/full") == S_IFCHR)
    }

    /// Starts `arguments` with stdout to `stdout`, waits until `ready` says so (or 60 s), sends
    /// `signal`, and returns the exit status.
    static func interrupt(_ arguments: [String], stdout: String, signal: Int32 = SIGINT, ready: () -> Bool) throws -> Int32 {
        let out = open(stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let null = open("/dev/null", O_WRONLY)
        let pid = try ToolRun.spawn(Fixtures.tool, arguments, stdout: out, stderr: null).get()
        close(out)
        close(null)
        let deadline = Date().addingTimeInterval(60)
        waitWhile(until: deadline, every: .milliseconds(50)) { !ready() }
        kill(pid, signal)
        return ToolRun.wait(for: pid)
    }

    static func lines(_ path: String) -> [Substring] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    @Test func anInterruptedTrackFinishesItsVideoAndStopsTheDock() throws {
        let folder = try Fixtures.temporaryFolder()
        let video = folder.appendingPathComponent("out.mp4").path
        let commands = folder.appendingPathComponent("commands.jsonl").path
        let status = try Self.interrupt(["track", Fixtures.sample("vtest.avi"), "-d", "hog-body-fast", "--annotate", video],
                                        stdout: commands) { Self.lines(commands).count >= 40 }
        #expect(status == 130)
        let sent = Self.lines(commands)
        #expect(sent.count >= 40 && sent.count < 795, "\(sent.count) commands")
        #expect(sent.last?.contains(#""velocity":{"x":0.0,"y":0.0,"z":0.0}"#) == true, "the last command: \(sent.last ?? "none")")
        // The video decodes to its last frame: one per command but the final stop.
        #expect(try Self.decodedFrames(video) == sent.count - 1)
    }

    @Test func anInterruptedSimulateAndReframeFinishTheirVideos() throws {
        let folder = try Fixtures.temporaryFolder()
        let view = folder.appendingPathComponent("view.mp4").path
        let trace = folder.appendingPathComponent("trace.tsv").path
        let simulated = try Self.interrupt(["simulate", Fixtures.sample("vtest.avi"), "-d", "hog-body-fast", "--annotate", view, "--trace", trace],
                                           stdout: folder.appendingPathComponent("metrics.json").path, signal: SIGTERM) {
            Self.lines(trace).count >= 30
        }
        #expect(simulated == 143)
        let frames = try Self.decodedFrames(view)
        #expect(frames >= 29 && frames < 795, "\(frames) frames")
        let output = folder.appendingPathComponent("reframed.mp4").path
        let states = folder.appendingPathComponent("states.jsonl").path
        let reframed = try Self.interrupt(["reframe", Fixtures.sample("vtest.avi"), output, "-d", "hog-body-fast", "--states", states],
                                          stdout: folder.appendingPathComponent("summary.json").path) {
            Self.lines(states).count >= 30
        }
        #expect(reframed == 130)
        let written = try Self.decodedFrames(output)
        #expect(written >= 30 && written < 795, "\(written) frames")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "stray files: \(left)")
    }

    /// The packets a fake VISCA camera got that move it (position inquiries left out).
    static func moves(_ camera: FakeVISCACamera) -> [[UInt8]] {
        camera.packets.filter { $0 != VISCA.positionInquiry() }
    }

    static let viscaStop = VISCA.drive(.zero, units: VISCA.Units())

    @Test func aVISCACameraIsStoppedAtTheEndOfAFileAndAfterCtrlC() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        // End of file (played in real time to the camera).
        let run = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "15", "-d", "hog-body-fast",
                                         "--dock", "visca-udp:127.0.0.1:\(camera.port)"])
        #expect(run.status == 0, "\(run.stderr)")
        let atEnd = Self.moves(camera)
        #expect(atEnd.contains { $0 != Self.viscaStop }, "the camera was never moved: \(atEnd)")
        #expect(atEnd.last == Self.viscaStop, "the last move: \(atEnd.last ?? [])")
        // Ctrl-C in the middle.
        let folder = try Fixtures.temporaryFolder()
        let before = camera.packets.count, movesBefore = atEnd.count
        let status = try Self.interrupt(["track", Fixtures.sample("vtest.avi"), "-d", "hog-body-fast",
                                         "--dock", "visca-udp:127.0.0.1:\(camera.port)"],
                                        stdout: folder.appendingPathComponent("out").path) {
            Self.moves(camera).dropFirst(movesBefore).contains { $0 != Self.viscaStop } && camera.packets.count > before + 20
        }
        #expect(status == 130)
        // This run's own moves: the first run's stop must not stand in for this one's.
        let second = Array(Self.moves(camera).dropFirst(movesBefore))
        #expect(second.contains { $0 != Self.viscaStop }, "the second run never moved the camera: \(second)")
        #expect(second.last == Self.viscaStop, "the last move after Ctrl-C: \(second.last ?? [])")
    }

    /// `track FILE --dock visca-udp:CAM --states - | head -n 40`: when the reader goes the run
    /// ends on the write error (one line, exit 1, no SIGPIPE death) and the camera's last packet is a stop.
    @Test func aReaderThatGoesAwayEndsTheRunWithTheDockStopped() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        var out: [Int32] = [0, 0]
        #expect(pipe(&out) == 0)
        let err = try Fixtures.temporaryFolder().appendingPathComponent("err").path
        let errFD = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let pid = try ToolRun.spawn(Fixtures.tool, ["track", Fixtures.sample("vtest.avi"), "-d", "hog-body-fast",
                                                    "--dock", "visca-udp:127.0.0.1:\(camera.port)", "--states", "-"],
                                    stdout: out[1], stderr: errFD, closing: [out[0]]).get()
        close(out[1])
        close(errFD)
        // head -n 40: forty lines read, then the reader is gone.
        var newlines = 0
        var byte: UInt8 = 0
        while newlines < 40, read(out[0], &byte, 1) == 1 { if byte == 10 { newlines += 1 } }
        #expect(newlines == 40)
        #expect(Self.moves(camera).contains { $0 != Self.viscaStop }, "the camera was moved")
        close(out[0])
        let status = ToolRun.wait(for: pid)
        let said = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        #expect(status == 1, "exit \(status) (141: killed by SIGPIPE): \(said)")
        #expect(Self.moves(camera).last == Self.viscaStop, "the last move: \(Self.moves(camera).last ?? [])")
    }

    /// A frame loop that falls silent (a camera or stream outage) while the camera turns: a
    /// stop goes out; the next command moves it again.
    @Test func aVISCACameraLeftTurningIsStoppedWhenTheLoopFallsSilent() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        // The frames' clock is the test's: the idle watch decides on it, whatever the machine's load.
        let clock = ManualClock()
        let dock = DeviceDock(hardware: VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port)),
                              clock: clock.reading, stopWhenIdle: 0.3)
        let turn = AngularVelocity(x: 0, y: 0.3, z: 0)
        try dock.perform(.setAngularVelocity(turn), at: 0)
        // Frames keep coming for 0.6 s with the same velocity held: no stop.
        for _ in 0..<12 {
            clock.advance(by: 0.05)
            _ = try dock.motion(at: clock.now())
        }
        #expect(dock.idleStopsSent == 0)
        #expect(Self.moves(camera).last == VISCA.drive(turn, units: VISCA.Units()))
        // The outage: nothing for 0.8 s of the frames' clock; the watch notices within its wait.
        clock.advance(by: 0.8)
        waitWhile(atMost: .seconds(10)) { dock.idleStopsSent == 0 || Self.moves(camera).last != Self.viscaStop }
        #expect(dock.idleStopsSent == 1)
        #expect(Self.moves(camera).last == Self.viscaStop)
        // Frames again: the next command goes out (a pan right; its speed code may differ by
        // the dithering carried over).
        try dock.perform(.setAngularVelocity(turn), at: clock.now())
        let deadline = Date().addingTimeInterval(2)  // the fake records a packet on its own thread
        waitWhile(until: deadline, every: .milliseconds(10)) { Self.moves(camera).count < 3 }
        let resumed = try #require(Self.moves(camera).last)
        #expect(resumed != Self.viscaStop && resumed[6...7] == VISCA.drive(turn, units: VISCA.Units())[6...7], "\(resumed)")
    }

    /// A live camera's command stream (docksim in a pipe follows it as it comes): when the frames
    /// stop, a stop line goes out on the camera's clock; the next frame's command follows it.
    @Test func aLiveCommandStreamSaysStopWhenTheFramesStop() throws {
        final class Lines: @unchecked Sendable {
            let lock = NSLock()
            var all: [String] = []
            func add(_ line: String) { lock.withLock { all.append(line) } }
            var snapshot: [String] { lock.withLock { all } }
        }
        let lines = Lines()
        // The camera's clock is the test's: the idle watch decides on it, whatever the machine's load.
        let manual = ManualClock()
        let clock = manual.reading
        var dock = CommandStreamDock(model: SimulatedDock(), stopWhenIdle: 0.3, clock: clock) { lines.add($0) }
        try dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 0.4, z: 0)), at: clock())
        for _ in 0..<10 {
            manual.advance(by: 0.05)
            _ = dock.motion(at: clock())
        }
        #expect(lines.snapshot.count == 1, "a velocity held over frames is not stopped: \(lines.snapshot)")
        manual.advance(by: 0.7)
        waitWhile(atMost: .seconds(10)) { lines.snapshot.count < 2 }
        let stopped = lines.snapshot
        #expect(stopped.count == 2 && stopped[1].contains(#""velocity":{"x":0.0,"y":0.0,"z":0.0}"#), "\(stopped)")
        let time = try #require(try JSONSerialization.jsonObject(with: Data(stopped[1].utf8)) as? [String: Any])["time"] as? Double
        #expect(time.map { $0 > 0.7 && $0 < 2 } == true, "the stop is timed on the camera's clock: \(stopped[1])")
        try dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 0.4, z: 0)), at: clock())
        #expect(lines.snapshot.count == 3)
    }

    /// A backend nobody answers: the commands are refused, and the dock says it did not move
    /// (it reported a pan of 27.8 degrees).
    @Test func docksimWithASilentBackendReportsNoMotion() throws {
        let silent = try FakeVISCACamera()
        silent.stop()
        let run = try DockSimTests().pipe([
            #"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#,
            #"{"time":0.5,"command":"setAngularVelocity","velocity":{"x":0.0,"y":0.3,"z":0.0}}"#,
            #"{"time":2.1,"command":"getMotionState"}"#,
        ], arguments: ["--backend", "visca-udp:127.0.0.1:\(silent.port)"])
        #expect(run.replies.contains { $0["code"] as? String == "notConnected" && $0["line"] as? Int == 2 }, "\(run.replies)")
        let state = try #require(run.replies.last { $0["type"] as? String == "motionState" })
        #expect((state["position"] as? [String: Double])?["y"] == 0, "\(state)")
        #expect(run.stderr.contains("pan 0.0°"), "\(run.stderr)")
    }

    @Test func docksimStopsItsBackendAtTheEndOfInput() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        _ = try DockSimTests().pipe([
            #"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#,
            #"{"time":0.5,"command":"setAngularVelocity","velocity":{"x":0.0,"y":-0.3,"z":0.0}}"#,
        ], arguments: ["--backend", "visca-udp:127.0.0.1:\(camera.port)"])
        #expect(Self.moves(camera).last == Self.viscaStop, "\(Self.moves(camera))")
    }

    /// SIGTERM while docksim's input is still open (a dock bridge stopped by its service
    /// manager): the camera is told to stop, the summary printed, exit 143 (the signal killed
    /// it with the camera turning before).
    @Test func docksimStopsItsBackendOnSIGTERMWithItsInputOpen() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        // Spawned and reaped with waitpid (ToolRun), its stdin a pipe kept open until after the signal.
        var input: [Int32] = [0, 0]
        try #require(pipe(&input) == 0)
        for fd in input { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let errorsPath = try Fixtures.temporaryFolder().appendingPathComponent("docksim.err").path
        let devNull = open("/dev/null", O_WRONLY), errors = open(errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let pid = try ToolRun.spawn(DockSimTests.docksim, ["--backend", "visca-udp:127.0.0.1:\(camera.port)"], stdin: input[0],
                                    stdout: devNull, stderr: errors, closing: input).get()
        close(devNull)
        close(errors)
        close(input[0])
        let writer = FileHandle(fileDescriptor: input[1], closeOnDealloc: true)
        try writer.write(contentsOf: Data((#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"# + "\n"
            + #"{"time":0.5,"command":"setAngularVelocity","velocity":{"x":0.0,"y":-0.3,"z":0.0}}"# + "\n").utf8))
        let deadline = Date().addingTimeInterval(30)
        waitWhile(until: deadline, every: .milliseconds(20)) { !Self.moves(camera).contains(where: { $0 != Self.viscaStop }) }
        #expect(Self.moves(camera).last != Self.viscaStop, "the camera is turning before the signal")
        kill(pid, SIGTERM)
        let ended = ToolRun.waitForEnd(of: pid)
        try writer.close()
        let stderr = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        #expect(ended.status == 143 && ended.signal == nil, "exit \(ended.status), signal \(String(describing: ended.signal))")
        #expect(Self.moves(camera).last == Self.viscaStop, "\(Self.moves(camera))")
        #expect(stderr.contains("docksim: 2 requests"), "\(stderr)")
    }

    /// Wrong input that looked like success is an error that says what is wrong, or does the
    /// right thing; messages name what the user gave.
    @Test func wrongInputIsAClearErrorOrTheRightThing() throws {
        let folder = try Fixtures.temporaryFolder()
        let notes = folder.appendingPathComponent("notes.txt").path
        try "shopping list\n".write(toFile: notes, atomically: true, encoding: .utf8)
        let eval = try ToolRun.docktrack(["eval", notes])
        #expect(eval.status == 1 && eval.stderr.contains("not dlib's imglab XML"), "\(eval.status) \(eval.stdout) \(eval.stderr)")
        let simulate = try ToolRun.docktrack(["simulate", Fixtures.sample("messi5.jpg")])
        #expect(simulate.status == 1 && simulate.stderr.contains("is a still image"), "\(simulate.stderr)")
        let duration = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--duration", "5"])
        #expect(duration.status == 64 && duration.stderr.contains("--duration is for cameras and streams, not for a file"), "\(duration.stderr)")
        // A group photo tracks its faces.
        let group = try ToolRun.docktrack(["track", Fixtures.sample("faces/2008_001322.jpg"), "--states", "-", "-d", "mtcnn-face"])
        let record = try #require(group.lines.first.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? nil)
        #expect(((record["subjects"] as? [[String: Any]]) ?? []).count >= 2, "\(group.stdout)")
        // Outputs that cannot be: a format no encoder takes, a folder that does not exist.
        let webm = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "2", "-d", "hog-body-fast",
                                          "--annotate", folder.appendingPathComponent("out.webm").path])
        #expect(webm.status == 1 && webm.errorLines == ["docktrack: cannot write \(folder.path)/out.webm: its name must end in .mp4, .mov, .mkv or .avi (a video) or an image's extension (.png, .jpg)"], "\(webm.stderr)")
        let missing = try ToolRun.docktrack(["reframe", Fixtures.sample("vtest.avi"), "/no/such/folder/out.mp4", "--end", "3", "-d", "hog-body-fast"])
        #expect(missing.status == 1 && missing.errorLines == ["docktrack: cannot write /no/such/folder/out.mp4: its folder /no/such/folder does not exist"], "\(missing.stderr)")
    }
}
