import DockTrack
import DockTrackTestKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Line framing: linear, bounded, the same lines however the stream is cut.
@Suite(.onTestThreads) struct LineFramerTests {
    @Test func linesComeOutTheSameHoweverTheStreamIsCut() {
        let text = Array("{\"a\":1}\n\n{\"b\":2}\r\nlast".utf8)
        for chunk in [1, 2, 3, 7, 100] {
            var framer = LineFramer()
            var items: [LineFramer.Item] = []
            var offset = 0
            while offset < text.count {
                framer.append(text[offset..<min(text.count, offset + chunk)])
                offset += chunk
                while let item = framer.next() { items.append(item) }
            }
            if let last = framer.finish() { items.append(last) }
            #expect(items == [.line("{\"a\":1}"), .line(""), .line("{\"b\":2}\r"), .line("last")], "chunks of \(chunk)")
        }
    }

    @Test func aLineOverTheMaximumIsReportedOnceAndDroppedAsItArrives() {
        var framer = LineFramer(maximumLineLength: 1000)
        var items: [LineFramer.Item] = []
        // 10 MB without a newline, in 64 KiB chunks, then a good line.
        let chunk = [UInt8](repeating: 0x78, count: 65536)
        for _ in 0..<160 {
            framer.append(chunk)
            while let item = framer.next() { items.append(item) }
            #expect(framer.pendingByteCount <= 65536 + 1000)
        }
        framer.append(Array("\n{\"ok\":true}\n".utf8))
        while let item = framer.next() { items.append(item) }
        #expect(items.count == 2)
        guard case .tooLong(let bytes) = items.first else { Issue.record("no tooLong"); return }
        #expect(bytes > 1000)
        #expect(items.last == .line("{\"ok\":true}"))
    }

    @Test func aTenMegabyteLineCostsNoMoreThanItsBytes() {
        // Quadratic framing took minutes here; linear takes milliseconds. Not timed: a
        // regression shows as a test that does not finish.
        var framer = LineFramer()
        let chunk = [UInt8](repeating: 0x20, count: 4096)
        var tooLong = 0
        for _ in 0..<(10 << 20) / 4096 {
            framer.append(chunk)
            while let item = framer.next() { if case .tooLong = item { tooLong += 1 } }
        }
        #expect(tooLong == 1)
    }
}

/// The simulated dock: time jumps, limits and numbers that are huge, negative or not finite.
@Suite(.onTestThreads) struct SimulatedDockRobustnessTests {
    @Test func aJumpOfHoursIsTakenInClosedFormAndMatchesSmallSteps() throws {
        var jumped = SimulatedDock()
        var stepped = SimulatedDock()
        for dock in [0, 1] {
            if dock == 0 { try jumped.apply(.setAngularVelocity(AngularVelocity(x: 0.3, y: 0.5, z: 0)), at: 0) }
            else { try stepped.apply(.setAngularVelocity(AngularVelocity(x: 0.3, y: 0.5, z: 0)), at: 0) }
        }
        jumped.advance(to: 20)
        for i in 1...600 { stepped.advance(to: Double(i) / 30) }
        #expect(abs(jumped.position.y - stepped.position.y) < 1e-4, "\(jumped.position.y) vs \(stepped.position.y)")
        #expect(jumped.position.x == stepped.position.x, "tilt stops at its limit either way")
        #expect(jumped.velocity.x == 0 && abs(jumped.velocity.y - 0.5) < 1e-12)
        // An epoch timestamp and a time near the top of Double's range both return.
        jumped.advance(to: 1.7e9)
        #expect(abs(jumped.position.y - (stepped.position.y + 0.5 * (1.7e9 - 20))) < 1)
        jumped.advance(to: 1e300)
        #expect(jumped.time == 1e300)
        try jumped.apply(.setOrientation(DockOrientation(x: 0, y: 0, z: 0), duration: 0, relative: false), at: 1e300)
        jumped.advance(to: .infinity)
        jumped.advance(to: .nan)
        #expect(jumped.time == 1e300)
    }

    @Test func anOrientationFarAwayOnAContinuousAxisIsReachedInClosedForm() throws {
        var dock = SimulatedDock()
        try dock.apply(.setOrientation(DockOrientation(x: 0, y: 1e6, z: 0), duration: 0, relative: false), at: 0)
        dock.advance(to: 1e6)  // 3 rad/s: 333 334 s to get there
        #expect(abs(dock.position.y - 1e6) < 1e-6 && dock.velocity.y == 0)
    }

    @Test func fuzzFindingsReturnAtOnce() throws {
        // An orientation of 1e14 rad is only reached to within its rounding (a 1e-9 tolerance
        // never held there, and the next huge time stepped forever).
        var dock = SimulatedDock()
        try dock.apply(.setOrientation(DockOrientation(x: 0, y: 1e14, z: 0), duration: 0, relative: false), at: 3.1)
        dock.advance(to: 1e300)
        #expect(dock.time == 1e300 && dock.position.y.isFinite)
        // A tiny acceleration limit makes a transient of years: taken in bounded steps.
        var slow = SimulatedDock()
        var limits = DockLimits.standard
        limits.yaw.maximumAcceleration = 1e-9
        try slow.apply(.setLimits(limits), at: 0)
        try slow.apply(.setAngularVelocity(AngularVelocity(x: 0, y: 3, z: 0)), at: 0)
        slow.advance(to: 1e9)
        #expect(abs(slow.velocity.y - 1) < 0.01, "\(slow.velocity.y): 1e-9 rad/s² for 1e9 s")
    }

    @Test func limitsMayOnlyNarrowTheHardwares() throws {
        var dock = SimulatedDock()
        func limits(pitch: AxisLimits, yaw: AxisLimits? = nil, roll: AxisLimits? = nil) -> DockCommand {
            .setLimits(DockLimits(pitch: pitch, yaw: yaw ?? DockLimits.standard.yaw, roll: roll ?? DockLimits.standard.roll))
        }
        let hw = DockLimits.standard
        let bad: [(DockCommand, String)] = [
            (limits(pitch: AxisLimits(range: -0.1...0.1, maximumSpeed: -1, maximumAcceleration: 6)), "invalidRequest"),
            (limits(pitch: AxisLimits(range: -0.1...0.1, maximumSpeed: 1e308, maximumAcceleration: 6)), "invalidRequest"),
            (limits(pitch: AxisLimits(range: -0.1...0.1, maximumSpeed: .nan, maximumAcceleration: 6)), "invalidRequest"),
            (limits(pitch: AxisLimits(range: -2...2, maximumSpeed: 1, maximumAcceleration: 6)), "invalidRequest"),
            (limits(pitch: hw.pitch, roll: AxisLimits(range: -1...1, maximumSpeed: 1, maximumAcceleration: 1)), "notCapable"),
        ]
        for (command, code) in bad {
            #expect(throws: DockError.self) { try dock.apply(command, at: 0) }
            #expect(dock.lastError?.code == code)
            #expect(dock.limits == hw, "a refused setLimits changes nothing")
        }
        try dock.apply(limits(pitch: AxisLimits(range: -0.1...0.2, maximumSpeed: 1, maximumAcceleration: .infinity)), at: 0)
        #expect(dock.limits.pitch == AxisLimits(range: -0.1...0.2, maximumSpeed: 1, maximumAcceleration: 6))
        // After any of them the dock still reports finite numbers.
        try dock.apply(.setAngularVelocity(AngularVelocity(x: 1e19, y: -1e300, z: 0)), at: 0)
        dock.advance(to: 10)
        #expect([dock.position.x, dock.position.y, dock.velocity.x, dock.velocity.y].allSatisfy { $0.isFinite })
        #expect(dock.velocity.y == -3 && dock.position.x == 0.2)
        // An axis left out keeps the limits in force, on the wire too.
        let yawOnly = DockCommand.setLimits(DockLimits(yaw: AxisLimits(range: -1...1, maximumSpeed: 2, maximumAcceleration: 8)))
        let line = yawOnly.jsonLine(time: 10)
        #expect(!line.contains("pitch") && !line.contains("roll"), "\(line)")
        try dock.apply(try JSONDecoder().decode(TimedDockCommand.self, from: Data(line.utf8)).command, at: 10)
        #expect(dock.limits.pitch == AxisLimits(range: -0.1...0.2, maximumSpeed: 1, maximumAcceleration: 6), "pitch kept: \(dock.limits.pitch)")
        #expect(dock.limits.yaw == AxisLimits(range: -1...1, maximumSpeed: 2, maximumAcceleration: 8) && dock.limits.roll == hw.roll)
        // As DockKit's: limits that name no axis, and a range with nothing in it, are refused.
        #expect(throws: DockError.self) {
            try dock.apply(try JSONDecoder().decode(TimedDockCommand.self, from: Data(#"{"command":"setLimits","limits":{}}"#.utf8)).command, at: 10)
        }
        #expect(dock.lastError?.code == "invalidRequest" && dock.limits.yaw.range == -1...1, "no axis given: refused, nothing changes")
        #expect(throws: DockError.self) { try dock.apply(limits(pitch: AxisLimits(range: 0.1...0.1, maximumSpeed: 1, maximumAcceleration: 6)), at: 10) }
        #expect(dock.lastError?.code == "invalidRequest" && dock.limits.pitch.range == -0.1...0.2, "an empty range: refused")
    }

    @Test func devicesGetNumbersTheyCanHold() throws {
        let units = VISCA.Units()
        for value in [1e17, -1e17, 1e300, .infinity, -.infinity, .nan] {
            let drive = VISCA.drive(AngularVelocity(x: value, y: value, z: 0), units: units)
            #expect(drive.count == 9 && drive.last == 0xFF)
            let position = VISCA.position(DockOrientation(x: value, y: value, z: 0), relative: false, units: units)
            #expect(position.count == 15 && position.last == 0xFF)
        }
        #expect(Int16(saturating: 1e17) == .max && Int16(saturating: -1e17) == .min && Int32(saturating: .nan) == 0)
        #expect(Int32(saturating: 2.6) == 3 && Int(saturating: -2.6) == -3)
    }

    @Test func aSessionWithAVISCACameraSurvivesHugeNumbers() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        var session = DockSession(identity: AccessoryIdentity(name: "t", identifier: UUID(), firmwareVersion: "1", hardwareModel: "t"))
        session.hardware = VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port))
        _ = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#, at: 0)
        let replies = session.handle(#"{"time":1,"command":"setAngularVelocity","velocity":{"x":0,"y":1e19,"z":0}}"#, at: 1)
            + session.handle(#"{"time":2,"command":"setOrientation","orientation":{"x":0,"y":1e17,"z":0}}"#, at: 2)
            + session.handle(#"{"time":3,"command":"setOrientation","orientation":{"x":1e300,"y":-1e300,"z":0}}"#, at: 3)
        #expect(!replies.contains { $0.contains("error") }, "\(replies)")
        // The camera got the speed and the position the simulated motors took: within limits.
        #expect(camera.packets.contains(VISCA.drive(AngularVelocity(x: 0, y: 3, z: 0), units: VISCA.Units())))
    }
}

/// The dock protocol's typed requests: the session rule is decided on what a line means.
@Suite(.onTestThreads) struct DockRequestTests {
    @Test func requestsAreReadByMeaningNotSpelling() throws {
        #expect(try DockRequest(parsing: #"{"type":"\u0068ello","protocols":["org.docktrack.dock/1"]}"#).kind == .hello(protocols: ["org.docktrack.dock/1"]))
        #expect(try DockRequest(parsing: #"{"comm\u0061nd":"getBattery","time":2}"#) == DockRequest(kind: .query("getBattery"), time: 2))
        #expect(try DockRequest(parsing: #"{"command":"setSystemTracking","enabled":false}"#).kind == .command(.setSystemTracking(false)))
        for (line, message) in [("[1]", "not a JSON object"), ("hello", "not a JSON object"), (#"{"x":1}"#, "neither a hello nor a command"),
                                (#"{"command":"fly"}"#, "bad fly: unknown command 'fly'")] {
            #expect(throws: DockError.invalidRequest(message)) { try DockRequest(parsing: line) }
        }
        #expect(DockRequest.parse(.line("   ")) == nil)
    }
}

/// docksim as a server: clients that hang up, never read, send half a line; its socket path.
@Suite(.serialized, .serializedOnTestThreads) struct DockSimServerTests {
    /// Starts docksim on a fresh socket path; stderr goes to a file.
    static func start(_ arguments: [String], socket path: String? = nil) throws -> (pid: pid_t, socket: String, log: String) {
        let socket = path ?? Fixtures.socketPath("docksim")
        let log = try Fixtures.temporaryFolder().appendingPathComponent("docksim.log").path
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(fd) }
        let pid = try ToolRun.spawn(DockSimTests.docksim, ["--socket", socket] + arguments, stdout: fd, stderr: fd).get()
        return (pid, socket, log)
    }

    /// What the server has logged so far ("" before its log exists).
    static func said(_ log: String) -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Says hello and expects the dock's; on failure the server's log says why.
    func hello(_ client: LineSocket, server log: String) throws {
        client.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        let answered = try client.next(matching: #""type":"hello""#, within: 10) != nil
        #expect(answered, "no hello back; docksim's log: \(Self.said(log))")
    }

    /// Waits until the server has ended `count` sessions: the next owner says hello only once
    /// the last one's close has been read (in a CI run, a hello right after a close was refused
    /// or went unanswered and the dropped-client check after it never saw its owner).
    func waitForSessionsEnded(_ count: Int, server log: String) {
        waitWhile(atMost: .seconds(30), every: .milliseconds(20)) {
            Self.said(log).components(separatedBy: "session closed").count - 1 < count
        }
    }

    @Test func theOwnerIsAnsweredWhileOtherClientsMisbehave() throws {
        let server = try Self.start(["--state-interval", "0.005", "--duration", "300"])  // killed at the end; the duration is a backstop
        defer { kill(server.pid, SIGKILL); _ = ToolRun.wait(for: server.pid) }
        // Owners that end the normal ways: hello and close, query and close, garbage and close.
        for (ended, last) in [nil, #"{"command":"getMotionState"}"#, "garbage"].enumerated() {
            waitForSessionsEnded(ended, server: server.log)
            let a = try LineSocket(connectingTo: server.socket)
            try hello(a, server: server.log)
            if let last { a.send(last); _ = try a.next(matching: "\n", within: 0.2) }
        }
        waitForSessionsEnded(3, server: server.log)
        // An owner that stops reading its motion states is dropped; the dock stops.
        do {
            let mute = try LineSocket(connectingTo: server.socket)
            try hello(mute, server: server.log)
            mute.send(#"{"command":"setAngularVelocity","velocity":{"x":0,"y":0.4,"z":0}}"#)
            for _ in 0..<10000 { mute.send(#"{"command":"getMotionState"}"#) }
            let deadline = Date().addingTimeInterval(60)
            waitWhile(until: deadline, every: .milliseconds(100)) { !Self.said(server.log).contains("is not reading") }
            #expect(try String(contentsOfFile: server.log, encoding: .utf8).contains("is not reading"))
        }
        waitForSessionsEnded(4, server: server.log)
        let owner = try LineSocket(connectingTo: server.socket)
        try hello(owner, server: server.log)
        // A client that sends requests and never reads, one that sends half a line and
        // vanishes, and second sessions however hello is spelled.
        let neverReads = try LineSocket(connectingTo: server.socket)
        for _ in 0..<20000 { neverReads.send("not json at all, a line to be answered with an error") }
        do {
            let half = try LineSocket(connectingTo: server.socket)
            half.send(#"{"command":"getMo"#, newline: false)
        }
        for spelling in [#"{"type":"\u0068ello","protocols":["org.docktrack.dock/1"]}"#, #"{"command":"getBattery"}"#,
                         #"{"c\u006fmmand":"setAngularVelocity","velocity":{"x":0,"y":1,"z":0}}"#] {
            let second = try LineSocket(connectingTo: server.socket)
            second.send(spelling)
            #expect(try second.next(matching: "already open", within: 5) != nil, "\(spelling)")
        }
        // Held back behind the flooder's 20,000 lines (20 a second allowed), the owner would wait
        // many minutes: 5 s is a busy machine's margin, not the measure.
        for _ in 0..<5 {
            owner.send(#"{"command":"getBattery"}"#)
            #expect(try owner.next(matching: #""type":"battery""#, within: 5) != nil, "the owner is answered, not held back by the flood")
        }
        // The dock was stopped when its mute owner was dropped: it slows down at its limits'
        // acceleration, so a state or two may still show it turning.
        #expect(try owner.next(matching: #""type":"motionState","time":"#) != nil)
        #expect(try owner.next(matching: #""velocity":{"x":0.0,"y":0.0"#, within: 5) != nil, "the dock stopped when its mute owner was dropped")
        // docksim stops on SIGTERM, removes its socket, and was never killed by a signal.
        kill(server.pid, SIGTERM)
        #expect(ToolRun.wait(for: server.pid) == 0)
        #expect(access(server.socket, F_OK) != 0, "the socket file is removed")
    }

    @Test func aRegularFileAtTheSocketPathIsKeptAndALiveServerIsNotTakenOver() throws {
        let folder = try Fixtures.temporaryFolder()
        let file = folder.appendingPathComponent("notes.txt").path
        try "keep me".write(toFile: file, atomically: true, encoding: .utf8)
        let onFile = try ToolRun.run(DockSimTests.docksim, ["--socket", file, "--duration", "1"])
        #expect(onFile.status == 1)
        #expect(onFile.stderr == "docksim: \(file) exists and is not a socket; not replacing it\n")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep me")

        let first = try Self.start(["--duration", "60"])
        defer { kill(first.pid, SIGKILL); _ = ToolRun.wait(for: first.pid) }
        let client = try LineSocket(connectingTo: first.socket)
        try hello(client, server: first.log)
        let second = try ToolRun.run(DockSimTests.docksim, ["--socket", first.socket, "--duration", "1"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("another server is already serving this socket"))
        client.send(#"{"command":"getBattery"}"#)
        #expect(try client.next(matching: #""type":"battery""#) != nil, "the first server still serves")
    }

    @Test func runningOutOfDescriptorsNeitherSpinsNorStopsTheOwner() throws {
        // docksim with 16 descriptors: connections beyond them wait in the backlog; accept is
        // retried twice a second (it used to spin at 100% CPU on an always-readable listener).
        let socket = Fixtures.socketPath("docksim")
        let log = try Fixtures.temporaryFolder().appendingPathComponent("docksim.log").path
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let pid = try ToolRun.spawn("/bin/bash", ["-c", "ulimit -n 16; exec \"$0\" --socket \"$1\" --duration 60", DockSimTests.docksim, socket],
                                    stdout: fd, stderr: fd).get()
        close(fd)
        defer { kill(pid, SIGKILL); _ = ToolRun.wait(for: pid) }
        let owner = try LineSocket(connectingTo: socket)
        try hello(owner, server: log)
        let others = try (0..<12).map { _ in try LineSocket(connectingTo: socket) }
        Thread.sleep(forTimeInterval: 2)
        for _ in 0..<3 {
            owner.send(#"{"command":"getBattery"}"#)
            #expect(try owner.next(matching: #""type":"battery""#, within: 1) != nil, "the owner is answered")
        }
        let refusals = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("cannot accept a connection") }
        #expect(!refusals.isEmpty && refusals.count <= 10, "\(refusals.count) accept failures logged in 2 s")
        withExtendedLifetime(others) {}
    }

    @Test func aStaleSocketFileIsReplaced() throws {
        let first = try Self.start(["--duration", "60"])
        _ = try LineSocket(connectingTo: first.socket)
        kill(first.pid, SIGKILL)  // no chance to clean up
        _ = ToolRun.wait(for: first.pid)
        #expect(access(first.socket, F_OK) == 0)
        let second = try Self.start(["--duration", "60"], socket: first.socket)
        defer { kill(second.pid, SIGKILL); _ = ToolRun.wait(for: second.pid) }
        let client = try LineSocket(connectingTo: first.socket)
        try hello(client, server: second.log)
    }
}

/// docksim over pipes answers each request before the next is read.
@Suite(.onTestThreads) struct DockSimPipeTests {
    @Test func repliesArriveWhileStdinIsStillOpen() throws {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        #expect(pipe(&toChild) == 0 && pipe(&fromChild) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = [strdup(DockSimTests.docksim), nil]
        defer { free(argv[0]) }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, DockSimTests.docksim, &actions, nil, argv, environ) == 0)
        close(toChild[0])
        close(fromChild[1])
        let line = Array((#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"# + "\n").utf8)
        _ = line.withUnsafeBytes { write(toChild[1], $0.baseAddress, $0.count) }
        var pfd = pollfd(fd: fromChild[0], events: Int16(POLLIN), revents: 0)
        #expect(poll(&pfd, 1, 10_000) == 1, "the hello is answered while stdin is open")
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = read(fromChild[0], &bytes, bytes.count)
        #expect(n > 0 && String(decoding: bytes[0..<max(0, n)], as: UTF8.self).hasPrefix(#"{"type":"hello""#))
        close(toChild[1])
        close(fromChild[0])
        #expect(ToolRun.wait(for: pid) == 0)
    }

    @Test func hugeTimesAndALongLineAreAnsweredAtOnce() throws {
        let long = String(repeating: "x", count: 3 << 20)
        let (replies, stderr) = try DockSimTests().pipe([
            #"{"time":1,"command":"setAngularVelocity","velocity":{"x":0,"y":0.5,"z":0}}"#,
            #"{"time":1e7,"command":"getMotionState"}"#,
            long,
            #"{"time":1.7e9,"command":"getMotionState"}"#,
            #"{"time":1e300,"command":"getMotionState"}"#,
        ])
        let states = replies.filter { $0["type"] as? String == "motionState" }
        #expect(states.count == 4)
        // The velocity is held for a second of the client's silence, then stopped: the dock does
        // not integrate across a jump of 1e7 s (it turned 5e6 rad before).
        let yaw = (states[0]["position"] as! [String: Double])["y"]!
        #expect(yaw > 0.3 && yaw < 1, "\(yaw)")
        #expect(states.allSatisfy { ($0["velocity"] as? [String: Double])?["y"] == 0 }, "\(states)")
        let error = try #require(replies.first { $0["type"] as? String == "error" })
        #expect(error["line"] as? Int == 3 && (error["message"] as? String ?? "").contains("at most 1048576"))
        #expect(stderr.contains("5 requests, 1 errors"))
    }
}

/// Frames of 1 px to 4000 px through every detector: an answer or a clear error, never a crash.
@Suite(.onTestThreads) struct FrameSizeTests {
    static func gray(_ width: Int, _ height: Int) throws -> Image {
        try #require(try Image.filling(size: ImageSize(width: width, height: height), channels: 3) { buffer in
            for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: (i * 7919) >> 5) }
            return true
        })
    }

    @Test(arguments: ["default", "fast", "hog-body", "hog-body-fast", "dnn-face", "dnn-face-verified", "mtcnn-face", "haar-face", "lbp-face",
                      "cascade-body", "blazeface-face", "blazeface-face-verified", "blazeface-short-face"])
    func tinyAndLopsidedFramesAreAnAnswerOrFrameTooSmall(_ name: String) throws {
        let detector = try DetectorCatalog.make(name, models: Fixtures.models)
        let sizes = [(1, 1), (2, 2), (8, 8), (16, 16), (19, 19), (31, 63), (40, 40), (43, 86), (64, 64), (4000, 20), (20, 4000), (49, 4000), (4000, 90)]
        for (width, height) in sizes {
            let image = try Self.gray(width, height)
            let result = Result { () throws(DetectorError) in try detector.detect(in: image, minimumConfidence: 0.5) }
            guard case .failure(let error) = result else { continue }
            guard case .frameTooSmall(let part, let size, let minimum) = error else {
                Issue.record("\(name) on \(width)x\(height): \(error)")
                continue
            }
            #expect(part.hasPrefix("hog-body") || part == "mtcnn-face" || part.hasPrefix("blazeface"))
            #expect(size == ImageSize(width: width, height: height))
            #expect(size.width < minimum.width || size.height < minimum.height, "\(size) vs \(minimum)")
        }
    }

    @Test func combinedDetectorsStillFindFacesInFramesTooSmallForBodies() throws {
        // messi5.jpg shrunk so that its face stays visible but no body window fits.
        let messi = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let small = try messi.resized(to: ImageSize(width: 160, height: 60))
        #expect(throws: DetectorError.self) { try DetectorCatalog.make("hog-body", models: Fixtures.models).detect(in: small, minimumConfidence: 0.5) }
        _ = try DetectorCatalog.make("default", models: Fixtures.models).detect(in: small, minimumConfidence: 0.5)
        let schedule = IdlePartSchedule(try DetectorCatalog.make("default", models: Fixtures.models))
        for _ in 0..<10 { _ = try schedule.detect(in: small, minimumConfidence: 0.5) }
    }

    @Test func theCommandLineSaysFrameTooSmall() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = folder.appendingPathComponent("tiny.png").path
        try Self.gray(16, 16).write(to: path)
        let run = try ToolRun.docktrack(["detect", path, "-d", "hog-body"])
        #expect(run.status == 1)
        #expect(run.stderr == "docktrack: frame too small for hog-body: 16x16 (it needs at least 43x86)\n")
        #expect(try ToolRun.docktrack(["detect", path]).status == 0, "the default still looks for faces")
    }

    @Test func simulateAtTheSmallestZoomRuns() throws {
        let run = try ToolRun.docktrack(["simulate", Fixtures.sample("carphone_pristine.mp4"), "--zoom", "0.2", "--end", "30"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.last?.contains("\"frames\":30") == true)
    }
}

/// Bad command lines: one clear line each, never a crash or a silent success.
@Suite(.onTestThreads) struct BadInputMessageTests {
    @Test func eachBadInputIsOneClearLine() throws {
        let folder = try Fixtures.temporaryFolder()
        let threads = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "--threads", "100000"])
        #expect(threads.status == 64 && threads.stderr.hasPrefix("Error: --threads must be between 0 and 256, not 100000"))
        let object = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--object", "0.5,0.5,0.0001,0.0001", "--end", "3"])
        #expect(object.status == 1)
        #expect(object.stderr == "docktrack: detector object tracker failed: the box is 0.1x0.1 px on a 768x576 frame; it must be at least 4x4 px\n")
        let start = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--start", "100000"])
        #expect(start.status == 1 && start.stderr == "docktrack: the first frame asked for (100000) is past the end of the input (795 frames)\n")
        let annotateFolder = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "--annotate", folder.path])
        #expect(annotateFolder.status == 1 && annotateFolder.stderr == "docktrack: \(folder.path) is a folder; give a file name (.mp4, .mov, .avi or an image)\n")
        let fov = try ToolRun.docktrack(["simulate", Fixtures.sample("vtest.avi"), "--scene-fov", "360", "--end", "2"])
        #expect(fov.status == 0, "360 is allowed, as the message says")
        let garbage = folder.appendingPathComponent("garbage.mp4").path
        try "not a video".write(toFile: garbage, atomically: true, encoding: .utf8)
        let notVideo = try ToolRun.docktrack(["detect", garbage])
        #expect(notVideo.status == 1 && notVideo.stderr == "docktrack: \(garbage): cannot be read (not a video FFmpeg can decode)\n")
    }

    @Test func vadWarnsAboutATruncatedVideo() throws {
        let folder = try Fixtures.temporaryFolder()
        let cut = try Fixtures.truncatedCopy(of: "Megamind.avi", bytes: 300_000, in: folder)
        let run = try ToolRun.docktrack(["vad", cut])
        #expect(run.status == 0 && !run.lines.isEmpty)
        #expect(run.stderr.contains("warning: \(cut): the sound ends at") && run.stderr.contains("truncated or corrupt file"))
        let whole = try ToolRun.docktrack(["vad", Fixtures.sample("Megamind.avi")])
        #expect(whole.stderr.isEmpty)
    }

    @Test func epochStampedObservationsAreTrackedAtOnce() throws {
        let folder = try Fixtures.temporaryFolder()
        let lines = (0..<60).map { i in
            DetectionRecord(frame: i, time: 1.7e9 + Double(i) / 20, size: ImageSize(width: 640, height: 480), observations: [
                Observation(type: .humanFace, rect: UnitRect(x: 0.7, y: 0.55, width: 0.1, height: 0.13), confidence: 0.9)]).jsonLine
        }
        let input = folder.appendingPathComponent("epoch.jsonl")
        try ([String(repeating: "x", count: 2 << 20)] + lines).joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["track", "--observations", input.path])
        #expect(run.status == 0)
        #expect(run.lines.count == 61, "a command per observation line and the stop at the end")
        #expect(run.lines.last?.contains(#""velocity":{"x":0.0,"y":0.0,"z":0.0}"#) == true, "\(run.lines.last ?? "")")
        #expect(run.stderr.contains("observations line 1: longer than 1048576 bytes; skipped"))
    }

    /// Observations with a gap of 1000 s in their times (a caller paused, a clock that
    /// jumped): the first command after it moves no faster than the dock's acceleration allows
    /// from rest (it was 2.41 rad/s, 24 rad/s^2 against 8), nor does any other.
    @Test func aGapInTheObservationsTimesDoesNotJerkTheDock() throws {
        let folder = try Fixtures.temporaryFolder()
        // The face on the left, then, after the gap, on the right: the dock has far to turn.
        let left = Observation(type: .humanFace, rect: UnitRect(x: 0.1, y: 0.55, width: 0.1, height: 0.13), confidence: 0.9)
        let right = Observation(type: .humanFace, rect: UnitRect(x: 0.8, y: 0.55, width: 0.1, height: 0.13), confidence: 0.9)
        let times = (0..<30).map { Double($0) / 10 } + (0..<30).map { 1003 + Double($0) / 10 }
        let lines = times.enumerated().map { i, t in
            DetectionRecord(frame: i, time: t, size: ImageSize(width: 640, height: 480), observations: [t < 1000 ? left : right]).jsonLine
        }
        let input = folder.appendingPathComponent("gap.jsonl")
        try lines.joined(separator: "\n").write(to: input, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["track", "--observations", input.path])
        #expect(run.status == 0, "\(run.stderr)")
        let commands = run.lines.compactMap { line -> (time: Double, yaw: Double)? in
            let object = RequestIDTests.object(line)
            guard let time = object["time"] as? Double, let velocity = object["velocity"] as? [String: Any], let yaw = velocity["y"] as? Double else { return nil }
            return (time, yaw)
        }
        #expect(commands.count > 50)
        let acceleration = DockLimits.standard.yaw.maximumAcceleration
        var previous = (time: -Double.infinity, yaw: 0.0)
        for command in commands {
            let span = min(max(command.time - previous.time, 0), AxisController.startingSpan)
            let allowed = acceleration * (span > 0 ? span : AxisController.startingSpan) + 1e-6
            // A stop is the dock's to ramp down; a move is checked.
            #expect(command.yaw == 0 || abs(command.yaw - previous.yaw) <= allowed, "at \(command.time): \(previous.yaw) -> \(command.yaw) rad/s")
            previous = command
        }
        #expect(commands.contains { $0.time > 1003 && abs($0.yaw) > 0.05 }, "it still frames after the gap")
    }
}
