import DockTrack
import Foundation
import Testing
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The real `docksim` process, through a real pipe and a real Unix socket.
@Suite struct DockSimTests {
    static var docksim: String { URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent().appendingPathComponent("docksim").path }

    /// Runs docksim with `input` on stdin and returns its stdout lines parsed as JSON objects.
    func pipe(_ input: [String], arguments: [String] = []) throws -> (replies: [[String: Any]], stderr: String) {
        let run = try ToolRun.run(Self.docksim, arguments, input: Data((input.joined(separator: "\n") + "\n").utf8))
        #expect(run.status == 0)
        let replies = try run.stdout.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        return (replies, run.stderr)
    }

    /// The motor trace ends with the dock still: its last line after the input ends shows the
    /// stop (it ended at full speed, the stop unseen).
    @Test func theTraceEndsWithTheDockStill() throws {
        let trace = try Fixtures.temporaryFolder().appendingPathComponent("dock.tsv")
        _ = try pipe([#"{"time":0,"command":"setAngularVelocity","velocity":{"x":0.2,"y":1,"z":0}}"#,
                      #"{"time":0.5,"command":"setAngularVelocity","velocity":{"x":0.2,"y":1,"z":0}}"#],
                     arguments: ["--trace", trace.path])
        let rows = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map { $0.split(separator: "\t") }
        let speeds = rows.compactMap { row in row.count >= 5 ? (Double(row[3]), Double(row[4])) : nil }
        #expect(speeds.contains { ($0.0 ?? 0) > 0.9 }, "it turned: \(rows)")
        #expect(speeds.last.map { $0.0 == 0 && $0.1 == 0 } == true, "the last line: \(rows.last ?? [])")
    }

    @Test func helloCommandsQueriesAndErrorsOverAPipe() throws {
        let (replies, stderr) = try pipe([
            #"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#,
            "hello there",
            #"{"command":"fly"}"#,
            #"{"time":1,"command":"setAngularVelocity","velocity":{"x":0,"y":0.5,"z":0}}"#,
            #"{"time":2,"command":"getMotionState"}"#,
            #"{"time":2.1,"command":"setOrientation","orientation":{"x":0,"y":0,"z":0},"duration":1}"#,
            #"{"time":2.2,"command":"setOrientation","orientation":{"x":0,"y":0,"z":0},"duration":1}"#,
            #"{"time":2.3,"command":"setOrientation","orientation":{"x":0,"y":0,"z":0},"duration":1}"#,
            #"{"time":2.4,"command":"setAngularVelocity","velocity":{"x":0,"y":"fast","z":0}}"#,
            #"{"time":2.5,"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":1}}"#,
            #"{"time":4,"command":"getBattery"}"#,
        ])
        let hello = try #require(replies.first)
        #expect(hello["type"] as? String == "hello" && hello["protocol"] as? String == "org.docktrack.dock/1")
        let accessory = try #require(hello["accessory"] as? [String: Any])
        #expect(accessory["category"] as? String == "trackingStand" && UUID(uuidString: accessory["identifier"] as? String ?? "") != nil)
        #expect((hello["capabilities"] as? [String])?.contains("pan") == true)
        let errors = replies.filter { $0["type"] as? String == "error" }
        #expect(errors.map { $0["line"] as? Int } == [2, 3, 8, 9, 10])
        #expect(errors.map { $0["code"] as? String } == ["invalidRequest", "invalidRequest", "rateTooHigh", "invalidRequest", "notCapable"])
        // Half a radian per second for one second.
        let state = try #require(replies.first { $0["type"] as? String == "motionState" && $0["time"] as? Double == 2 })
        let yaw = (state["position"] as! [String: Double])["y"]!
        #expect(abs(yaw - 0.48) < 0.02, "\(yaw)")
        #expect(replies.contains { $0["type"] as? String == "battery" && ($0["level"] as? Double ?? 0) < 0.8 })
        #expect(stderr.contains("11 requests, 5 errors"))
    }

    @Test(.onTestThreads) func theDockEndsUpPointingAtThePerson() throws {
        // Custom tracking: a face right of centre (x 0.7...0.8), fed at 20 per second for 4 s,
        // through docktrack into docksim.
        let input = try Fixtures.observationsFile([
            Observation(type: .humanFace, rect: UnitRect(x: 0.7, y: 0.55, width: 0.1, height: 0.13), confidence: 0.9)], count: 80)
        let track = try ToolRun.docktrack(["track", "--observations", input.path])
        #expect(track.status == 0)
        let (replies, _) = try pipe(track.lines)
        let final = try #require(replies.last { $0["type"] as? String == "motionState" })
        let yaw = (final["position"] as! [String: Double])["y"]!
        // The recorded camera is fixed at home, so the person sits 0.75 of the way across a 70°
        // view: atan(0.5 tan 35°) to the right.
        let expected = atan(0.5 * tan(35 * Double.pi / 180))
        #expect(abs(yaw - expected) < 0.03, "dock at \(yaw) rad, person at \(expected)")
    }

    @Test func aSocketSessionWithEventsUndockingAndReRegistration() throws {
        let (process, socketPath) = try startSocketDocksim(script: """
            {"at":0.8,"event":"button","id":1,"pressed":true}
            {"at":1.5,"event":"undocked"}
            {"at":2.5,"event":"docked"}
            """)
        defer { process.stop() }
        let a = try LineSocket(connectingTo: socketPath)
        a.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        #expect(try a.next(matching: "\"type\":\"hello\"") != nil)
        a.send(#"{"command":"setAngularVelocity","velocity":{"x":0,"y":0.3,"z":0}}"#)
        #expect(try a.next(matching: "\"motionState\"") != nil, "motion states stream to the session's client")
        // A second client cannot open another session on the same protocol.
        let b = try LineSocket(connectingTo: socketPath)
        b.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        #expect(try b.next(matching: "already open") != nil)
        #expect(try a.next(matching: #""event":"button","id":1,"pressed":true"#) != nil)
        #expect(try a.next(matching: #""event":"undocked""#) != nil)
        a.send(#"{"command":"getMotionState"}"#)
        #expect(try a.next(matching: #""code":"invalidated""#) != nil, "commands while undocked are invalidated")
        #expect(try a.next(matching: #""event":"docked""#) != nil)
        a.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        #expect(try a.next(matching: "\"type\":\"hello\"") != nil, "re-registered")
        a.send("garbage")
        #expect(try a.next(matching: #""code":"invalidRequest""#) != nil)
        a.send(#"{"command":"getBattery"}"#)
        #expect(try a.next(matching: "\"type\":\"battery\"") != nil, "the session goes on after a malformed line")
    }
}

/// DockKit's limits and system-tracking switch last one app's session: docksim gives them back
/// when a client hangs up, so the next app (on a real PTZ camera behind docksim too) starts from
/// the dock's own.
@Suite(.onTestThreads) struct DockSimSessionTests {
    @Test func aDepartedClientsLimitsAndTrackingSwitchAreNotTheNextOnes() throws {
        let (process, socketPath) = try startSocketDocksim(script: "")
        defer { process.stop() }
        let first = try LineSocket(connectingTo: socketPath)
        first.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        let hello = try #require(try first.next(matching: "\"type\":\"hello\""))
        let own = try #require(DockTestLine(hello)?.limits("dockLimits"), "\(hello)")
        first.send(#"{"command":"setLimits","limits":{"yaw":{"minimum":-1,"maximum":1,"maximumSpeed":0.5}}}"#)
        #expect(try first.next(matching: #""maximumSpeed":0.5"#) != nil)
        first.send(#"{"command":"setSystemTracking","enabled":false}"#)
        first.send(#"{"command":"getSystemTracking"}"#)
        #expect(try first.next(matching: #""enabled":false"#) != nil)
        shutdown(first.fd, Int32(SHUT_RDWR))
        // The next client, as soon as the session is free.
        var limits: DockLimits?, tracking: String?
        try waitWhile(atMost: .seconds(20), every: .milliseconds(50)) {
            let next = try LineSocket(connectingTo: socketPath)
            next.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
            guard let said = try next.next(matching: "\"type\""), said.contains(#""type":"hello""#) else { return true }
            limits = DockTestLine(said)?.limits("limits")
            next.send(#"{"command":"getSystemTracking"}"#)
            tracking = try next.next(matching: #""systemTracking""#)
            return false
        }
        #expect(limits == own, "the dock's own limits: \(String(describing: limits)) against \(own)")
        #expect(tracking?.contains(#""enabled":true"#) == true, "\(tracking ?? "no answer")")
    }
}

/// A client of the docksim serving `socketPath`, once it listens (docksim may still be starting).
func connectedManager(_ socketPath: String) async throws -> DockAccessoryManager? {
    var manager: DockAccessoryManager?
    await awaitWhile(atMost: .seconds(150), every: .milliseconds(50)) {
        manager = try? DockAccessoryManager(socketPath: socketPath)
        return manager == nil
    }
    return manager
}

/// Starts docksim serving a fresh socket with these scripted events; returns the process and the path.
func startSocketDocksim(script events: String, arguments: [String] = []) throws -> (process: DocksimProcess, socket: String) {
    let script = try Fixtures.temporaryFolder().appendingPathComponent("script.jsonl")
    try events.write(to: script, atomically: true, encoding: .utf8)
    let process = try DocksimProcess(spawning: ["--script", script.path] + arguments)
    return (process, process.socket)
}

/// A Unix-socket client reading JSON lines, for tests.
final class LineSocket {
    let fd: Int32
    private var buffer = Data()

    init(connectingTo path: String, within seconds: Double = 30) throws {
        var connected: Int32?
        waitWhile(atMost: .milliseconds(Int64(seconds * 1000)), every: .milliseconds(50)) {
            connected = try? UnixSocket.connect(to: path)
            return connected == nil
        }
        guard let connected else { throw CocoaError(.fileNoSuchFile) }
        fd = connected
    }

    deinit { close(fd) }

    /// Whether the server has closed the connection (read now, without waiting or consuming).
    var isClosedByPeer: Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }

    /// Sends a line (never a SIGPIPE when the server has closed the connection).
    func send(_ line: String, newline: Bool = true) {
        let bytes = Array((line + (newline ? "\n" : "")).utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The next line containing `text`, skipping others; nil after `seconds` or at the end.
    func next(matching text: String, within seconds: Double = 4) throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                if line.contains(text) { return line }
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // A signal (another test's child exiting) interrupts poll: that is no end.
            let polled = poll(&pfd, 1, 100)
            if polled < 0 && errno == EINTR { continue }
            guard polled >= 0 else { return nil }
            if pfd.revents & Int16(POLLIN | POLLHUP) != 0 {
                var bytes = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &bytes, bytes.count)
                if n <= 0 { return nil }
                buffer.append(contentsOf: bytes[0..<n])
            }
        }
        return nil
    }
}

/// Collects what a stream yields, from a task, for checking later.
actor Collected<Element: Sendable> {
    private(set) var items: [Element] = []
    func add(_ item: Element) { items.append(item) }

    static func from(_ stream: AsyncStream<Element>) -> Collected<Element> {
        let collected = Collected<Element>()
        Task { for await item in stream { await collected.add(item) } }
        return collected
    }
}

/// Several named batteries with DockKit's charge states, and the tracking button, on the session.
@Suite struct BatteryAndButtonTests {
    @Test func batteriesChargeAsTheyCanAndTheTrackingButtonIsReported() {
        var session = DockSession(identity: AccessoryIdentity(name: "t", identifier: UUID(), firmwareVersion: "1", hardwareModel: "t"),
                                  battery: BatteryState(level: 0.999), otherBatteries: [BatteryState(name: "remote", level: 0.551, chargeable: false)],
                                  script: [ScriptedEvent(at: 1, event: "charging", enabled: true), ScriptedEvent(at: 2, event: "trackingButton", enabled: false)])
        let hello = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#, at: 0)
        #expect(hello.first?.contains(#""docked":true,"trackingButtonEnabled":true,"limits":{"#) == true, "\(hello)")
        let before = session.handle(#"{"command":"getBattery"}"#, at: 0.5).compactMap { line -> BatteryState? in
            if case .battery(let b)? = DockMessage(line: line) { b } else { nil }
        }
        #expect(before.map(\.name) == ["internal", "remote"] && before.map(\.chargeState) == [.notCharging, .notChargeable], "\(before)")
        // On the charger: the chargeable battery charges until full, the other goes on draining.
        let charging = session.advance(to: 1.5)
        #expect(charging.count == 2 && charging[0].contains(#""chargeState":"charging""#) && charging[1].contains(#""chargeState":"notChargeable""#), "\(charging)")
        let button = session.advance(to: 2.5)
        #expect(button.count == 1 && DockMessage(line: button[0]) == .trackingButton(enabled: false), "\(button)")
        _ = session.advance(to: 10)
        #expect(session.batteries[0].level == 1 && session.batteries[0].chargeState == .notCharging, "full: \(session.batteries[0])")
        _ = session.handle(#"{"command":"setAngularVelocity","velocity":{"x":0,"y":1,"z":0}}"#, at: 10)
        _ = session.advance(to: 100)
        #expect(session.batteries[0].level == 1, "full on the charger stays full while the motors run: \(session.batteries[0])")
        #expect(session.batteries[1].level < 0.551 && session.batteries[1].chargeState == .notChargeable)
        #expect(session.handle(#"{"command":"getAccessory"}"#, at: 11).first?.contains(#""trackingButtonEnabled":false"#) == true)
        #expect(BatteryState(spec: "remote:0.5:notChargeable") == BatteryState(name: "remote", level: 0.5, chargeable: false))
        #expect(BatteryState(spec: "remote:1.5") == nil && BatteryState(spec: ":0.5") == nil && BatteryState(spec: "r:0.5:x") == nil
                && BatteryState(spec: "r:nan") == nil)
    }
}

/// Orientations as DockKit sends them: angles (Vector3D) or a rotation quaternion (Rotation3D).
@Suite struct QuaternionOrientationTests {
    @Test func aQuaternionIsReadAsTheAnglesItTurnsBy() throws {
        let s = sin(Double.pi / 4), c = cos(Double.pi / 4)
        let yaw = try #require(DockOrientation(quaternionX: 0, y: s, z: 0, w: c))
        #expect(abs(yaw.y - Double.pi / 2) < 1e-9 && abs(yaw.x) < 1e-9 && abs(yaw.z) < 1e-9, "\(yaw)")
        let pitch = try #require(DockOrientation(quaternionX: sin(0.15), y: 0, z: 0, w: cos(0.15)))
        #expect(abs(pitch.x - 0.3) < 1e-9 && abs(pitch.y) < 1e-9, "\(pitch)")
        // Yaw 0.5, then pitch 0.2 on it: q = q(yaw) * q(pitch); read back as both.
        let (hy, hp) = (0.25, 0.1)
        let both = try #require(DockOrientation(quaternionX: cos(hy) * sin(hp), y: sin(hy) * cos(hp), z: -sin(hy) * sin(hp), w: cos(hy) * cos(hp)))
        #expect(abs(both.y - 0.5) < 1e-9 && abs(both.x - 0.2) < 1e-9 && abs(both.z) < 1e-9, "\(both)")
        // Not normalised: the same turn. No length, or not finite: none.
        #expect(abs(try #require(DockOrientation(quaternionX: 0, y: 2 * s, z: 0, w: 2 * c)).y - Double.pi / 2) < 1e-9)
        #expect(DockOrientation(quaternionX: 0, y: 0, z: 0, w: 0) == nil)
        #expect(DockOrientation(quaternionX: .nan, y: 0, z: 0, w: 1) == nil && DockOrientation(quaternionX: 0, y: .infinity, z: 0, w: 1) == nil)
    }

    /// A 90-degree yaw sent as a quaternion ends at 1.571 rad (read as angles, with w left
    /// out, it ended at 0.71); one of no length is refused.
    @Test func aNinetyDegreeQuaternionYawEndsAtAQuarterTurn() throws {
        var session = DockSession(identity: AccessoryIdentity(name: "t", identifier: UUID(), firmwareVersion: "1", hardwareModel: "t"))
        _ = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#, at: 0)
        let took = session.handle(#"{"id":1,"command":"setOrientation","orientation":{"x":0,"y":0.70710678,"z":0,"w":0.70710678},"duration":1}"#, at: 0)
        #expect(took.contains { $0.contains(#""type":"done""#) }, "\(took)")
        _ = session.advance(to: 4)
        guard case .motionState(let state)? = DockMessage(line: session.motionStateLine()) else {
            Issue.record("no motion state: \(session.motionStateLine())")
            return
        }
        #expect(abs(state.position.y - 1.571) < 0.002, "\(state)")
        let refused = session.handle(#"{"command":"setOrientation","orientation":{"x":0,"y":0,"z":0,"w":0},"duration":1}"#, at: 4)
        #expect(refused.contains { $0.contains(#""code":"invalidRequest""#) }, "\(refused)")
    }
}

/// Battery states are pushed as they change, not only when asked: a percent, low battery, charging.
@Suite struct BatteryNewsTests {
    @Test func aBatteryCrossingAFifthPushesALowBatteryState() {
        var session = DockSession(identity: AccessoryIdentity(name: "t", identifier: UUID(), firmwareVersion: "1", hardwareModel: "t"),
                                  battery: BatteryState(level: 0.2012))
        _ = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#, at: 0)
        #expect(session.advance(to: 1).isEmpty, "nothing new while the level stays within its percent")
        _ = session.handle(#"{"command":"setAngularVelocity","velocity":{"x":0,"y":2,"z":0}}"#, at: 1)
        var pushed: [BatteryState] = []
        var t = 1.0
        while t < 10 {
            t += 0.1
            for line in session.advance(to: t) { if case .battery(let b)? = DockMessage(line: line) { pushed.append(b) } }
        }
        // 2 rad/s drains about 0.001 a second: the level crosses 0.2 (told as low at once), then
        // 0.195 (19 percent).
        #expect(pushed.count == 2 && pushed[0].lowBattery && pushed[0].level < 0.2 && pushed[0].level > 0.199, "\(pushed)")
        #expect(pushed.count == 2 && pushed[1].lowBattery && pushed[1].level < 0.195, "\(pushed)")
        // A percent drained is news too, and so is a change of charge state.
        #expect(BatteryState(level: 0.5, charging: true).isNews(after: BatteryState(level: 0.5)))
        #expect(BatteryState(level: 0.484).isNews(after: BatteryState(level: 0.486)))
        #expect(!BatteryState(level: 0.4951).isNews(after: BatteryState(level: 0.5049)))
        #expect(!BatteryState(level: 0.7999).isNews(after: BatteryState(level: 0.8)))
    }
}

@Suite struct AccessoryManagerTests {
    /// A socket that accepts the connection and never answers the hello (listening, never
    /// read): connecting fails within the hello timeout, and the state changes end.
    @Test func aDockThatNeverSaysHelloFailsWithinItsTimeout() async throws {
        let silent = try ListeningSocket(path: Fixtures.socketPath("docktrack-silent"))
        defer { silent.remove() }
        // The silent dock's side, on a thread of its own (the test's tasks may wait for a busy
        // pool): when the client hangs up, measured from the connection.
        let hungUpAfter = Mutex<Double?>(nil)
        let listening = silent.fd
        Thread.detachNewThread {
            var ready = [pollfd(fd: listening, events: Int16(POLLIN), revents: 0)]
            guard poll(&ready, 1, 20_000) > 0 else { return }
            let client = accept(listening, nil, nil)
            let connected = Date()
            var byte = [UInt8](repeating: 0, count: 512)
            var reply = [pollfd(fd: client, events: Int16(POLLIN), revents: 0)]
            while poll(&reply, 1, 20_000) > 0, read(client, &byte, byte.count) > 0 {}  // the hello, then the end
            hungUpAfter.withLock { $0 = Date().timeIntervalSince(connected) }
            close(client)
        }
        await #expect(throws: DockError.notConnected) { _ = try await DockAccessoryManager.connect(to: silent.path, helloTimeout: 0.5) }
        await awaitWhile(atMost: .seconds(10)) { hungUpAfter.withLock({ $0 }) == nil }
        let waited = try #require(hungUpAfter.withLock { $0 })
        // A client that never gives up would hold on until the peer's 20 s poll ends.
        #expect(waited >= 0.4 && waited < 15, "hung up after \(waited) s")
        // The stream says so too, and a request made meanwhile fails rather than hangs.
        let manager = try DockAccessoryManager(socketPath: silent.path, helloTimeout: 0.3)
        await #expect(throws: DockError.notConnected) { _ = try await manager.motionState() }
        var last: AccessoryStateChange?
        for await change in manager.stateChanges { last = change }
        #expect(last == .disconnected)
        // Nothing there at all: at once.
        await #expect(throws: DockError.notConnected) { _ = try await DockAccessoryManager.connect(to: silent.path + ".none") }
    }

    /// A folder of dock sockets watched: a docksim started there appears (with who it is), and
    /// disappears when it stops (it removes its socket); files that are no dock's never appear
    /// or disappear.
    @Test func docksComingAndGoingInAWatchedFolderAreReported() async throws {
        let folder = try Fixtures.temporaryFolder()
        // Asked for its hello for up to 20 s, not 2: under the full suite on two cores a docksim
        // just started answered later than 2 s and was never announced (a run saw none in 10 s).
        let watcher = try DockFolderWatcher(folder: folder.path, helloTimeout: 20)
        defer { watcher.stop() }
        let changes = Collected.from(watcher.changes)
        // A second reader, as an app with two loops has: each sees every change.
        let alsoChanges = Collected.from(watcher.changes)
        try "not a dock".write(to: folder.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        let socket = folder.appendingPathComponent("dock1.sock").path
        let process = try DocksimProcess(spawning: [], socket: socket)
        defer { process.stop() }
        await awaitWhile(atMost: .seconds(30)) { await changes.items.isEmpty }
        let appeared = await changes.items
        guard appeared.count == 1, case .appeared(let dock) = appeared[0] else {
            Issue.record("one dock appeared: \(appeared)")
            return
        }
        #expect(dock.socketPath == socket && dock.accessory?.category == .trackingStand, "\(dock)")
        await awaitWhile(atMost: .seconds(10)) { await alsoChanges.items.isEmpty }
        #expect(await alsoChanges.items == [.appeared(dock)], "the second reader sees the dock too")
        // A reader who comes later starts from the docks present.
        let late = Collected.from(watcher.changes)
        await awaitWhile(atMost: .seconds(10)) { await late.items.isEmpty }
        #expect(await late.items == [.appeared(dock)])
        // Stopped as a service manager stops it (SIGTERM). Its signals are taken: docksim takes
        // them before it opens its socket, and the dock was seen on that socket.
        process.stop(signal: SIGTERM)
        await awaitWhile(atMost: .seconds(10)) { await changes.items.count < 2 }
        #expect(await changes.items == [.appeared(dock), .disappeared(socketPath: socket)])
        await awaitWhile(atMost: .seconds(10)) { await alsoChanges.items.count < 2 }
        #expect(await alsoChanges.items == [.appeared(dock), .disappeared(socketPath: socket)])
    }

    /// The tracking button switched while the phone is off the dock is told as undocked, and a
    /// reader who comes later starts from undocked (it read docked before).
    @Test func aTrackingButtonChangeWhileUndockedStaysUndocked() async throws {
        let (process, socketPath) = try startSocketDocksim(script: """
            {"at":0.3,"event":"undocked"}
            {"at":0.6,"event":"trackingButton","enabled":false}
            """)
        defer { process.stop() }
        let dock = try #require(await connectedManager(socketPath))
        let states = Collected.from(dock.stateChanges)
        await awaitWhile(atMost: .seconds(10)) { await states.items.count < 3 }
        let changes = await states.items
        guard changes.count == 3, case .docked = changes[0], case .undocked = changes[1], case .undocked(let off) = changes[2] else {
            Issue.record("docked, undocked, then the button change while undocked: \(changes)")
            return
        }
        #expect(!off.trackingButtonEnabled)
        let late = Collected.from(dock.stateChanges)
        await awaitWhile(atMost: .seconds(10)) { await late.items.isEmpty }
        #expect(await late.items == [.undocked(off)], "a late reader starts from undocked")
    }

    @Test func streamsOfStateChangesMotionEventsAndBatteryWithReRegistration() async throws {
        let (process, socketPath) = try startSocketDocksim(script: """
            {"at":0.6,"event":"button","id":2,"pressed":true}
            {"at":0.7,"event":"cameraZoom","factor":2.5}
            {"at":0.8,"event":"trackingButton","enabled":false}
            {"at":5.0,"event":"undocked"}
            {"at":5.6,"event":"docked"}
            """, arguments: ["--other-battery", "remote:0.5:notChargeable"])
        defer { process.stop() }
        let dock = try #require(await connectedManager(socketPath))
        let states = Collected.from(dock.stateChanges), motion = Collected.from(try dock.motionStates)
        let events = Collected.from(try dock.accessoryEvents), battery = Collected.from(try dock.batteryStates)
        // Commands go as soon as the dock is registered (the undocking at 5 s on docksim's clock
        // leaves a loaded or sanitized run time); then wait for the undock and re-dock.
        await awaitWhile(atMost: .seconds(5)) { await states.items.isEmpty }
        dock.send(.setAngularVelocity(AngularVelocity(x: 0, y: 0.4, z: 0)))
        dock.query("getBattery")
        await awaitWhile(atMost: .seconds(10)) { await states.items.count < 4 }
        try await Task.sleep(for: .milliseconds(200))
        let changes = await states.items
        #expect(changes.count == 4, "\(changes)")
        guard changes.count == 4, case .docked(let first) = changes[0], case .docked(let buttonOff) = changes[1],
              case .undocked = changes[2], case .docked(let again) = changes[3] else { return }
        #expect(first.category == .trackingStand && first.capabilities.contains("tilt") && first.trackingButtonEnabled)
        #expect(!buttonOff.trackingButtonEnabled && buttonOff.identifier == first.identifier, "the tracking button switched off: \(buttonOff)")
        #expect(first.identifier == again.identifier && !again.trackingButtonEnabled, "the same dock re-registered, its button still off")
        #expect(await events.items == [.button(id: 2, pressed: true), .cameraZoom(factor: 2.5)])
        // On a loaded machine the command may have reached the dock just before it undocked
        // (which stops it): then the pan is asked again on the re-docked dock.
        let movedBefore = await motion.items.contains { $0.velocity.y > 0.3 }
        if !movedBefore {
            dock.send(.setAngularVelocity(AngularVelocity(x: 0, y: 0.4, z: 0)))
            await awaitWhile(atMost: .seconds(10)) { await !motion.items.contains(where: { $0.velocity.y > 0.3 }) }
        }
        let moving = await motion.items.filter { $0.velocity.y > 0.3 }
        #expect(!moving.isEmpty, "motion states show the pan moving")
        // The same for the battery query: asked while undocked it is refused, so asked again.
        if await battery.items.isEmpty {
            dock.query("getBattery")
            await awaitWhile(atMost: .seconds(10)) { await battery.items.isEmpty }
        }
        let batteries = await battery.items
        #expect(batteries.first.map { $0.name == "internal" && $0.level > 0 && $0.level <= 0.8 && $0.chargeState == .notCharging } == true, "\(batteries)")
        #expect(batteries.contains { $0.name == "remote" && $0.chargeState == .notChargeable && abs($0.level - 0.5) < 0.01 }, "\(batteries)")
        dock.disconnect()
    }
}
