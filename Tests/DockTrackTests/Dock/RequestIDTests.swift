import DockTrack
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Answers tied to their requests: every reply and error carries the id of the request it
/// answers, on the dock's side (the session) and through the client API against docksim.
@Suite struct RequestIDTests {
    static func session() -> DockSession {
        DockSession(identity: AccessoryIdentity(name: "test dock", identifier: UUID(), firmwareVersion: "1", hardwareModel: "sim"))
    }

    static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    @Test func everyAnswerCarriesTheIdOfItsRequest() {
        var session = Self.session()
        let hello = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"],"id":"h1"}"#, at: 0)
        #expect(hello.count == 2 && hello.allSatisfy { $0.hasPrefix(#"{"id":"h1","#) }, "\(hello)")
        #expect(session.handle(#"{"id":7,"command":"setAngularVelocity","velocity":{"x":0,"y":0.1,"z":0}}"#, at: 0.1)
                == [#"{"id":7,"type":"done","command":"setAngularVelocity"}"#])
        // A command the dock refuses, one it cannot read, one it does not know: each error names its request.
        for (id, line) in [(8, #"{"id":8,"command":"setAngularVelocity","velocity":{"x":0,"y":"fast","z":0}}"#),
                           (9, #"{"id":9,"command":"fly"}"#),
                           (10, #"{"id":10,"command":"setAngularVelocity","velocity":{"x":0,"y":0.1,"z":0.5}}"#)] {
            let answers = session.handle(line, at: 0.2)
            #expect(answers.count == 1 && Self.object(answers[0])["type"] as? String == "error", "\(answers)")
            #expect(Self.object(answers.first ?? "")["id"] as? Int == id, "\(answers)")
        }
        let query = session.handle(#"{"id":"q","command":"getMotionState"}"#, at: 0.3)
        #expect(query.count == 1 && query[0].hasPrefix(#"{"id":"q","type":"motionState""#), "\(query)")
        // Without an id, as before: a command taken is not answered, an error has no id.
        #expect(session.handle(#"{"command":"setAngularVelocity","velocity":{"x":0,"y":0.2,"z":0}}"#, at: 0.4).isEmpty)
        let plain = session.handle(#"{"command":"fly"}"#, at: 0.5)
        #expect(plain.count == 1 && Self.object(plain[0])["id"] == nil)
        // An id that is neither an integer nor a string is refused, and cannot be answered by it.
        let badID = session.handle(#"{"id":{"n":1},"command":"getBattery"}"#, at: 0.6)
        #expect(badID.count == 1 && Self.object(badID[0])["id"] == nil && badID[0].contains("id must be an integer or a string"), "\(badID)")
        // The protocol's 2 orientation commands a second: the third within one is refused, at its id.
        let orient = DockCommand.setOrientation(DockOrientation(x: 0, y: 0.2, z: 0), duration: 1, relative: false)
        let answers = (20..<23).map { session.handle(RequestID.number($0).tagging(orient.jsonLine(time: 0.65)), at: 0.65) }
        #expect(answers[0] == [#"{"id":20,"type":"done","command":"setOrientation","time":0.65,"target":{"x":0.0,"y":0.2,"z":0.0}}"#] && answers[1].first?.hasPrefix(#"{"id":21,"type":"done""#) == true, "\(answers)")
        #expect(answers[2].count == 1 && answers[2][0].hasPrefix(#"{"id":22,"type":"error","code":"rateTooHigh""#), "\(answers)")
        // Illegal limits are refused with invalidRequest, tagged.
        var limits = DockLimits.standard
        limits.yaw.maximumSpeed = -1
        let refused = session.handle(RequestID.number(11).tagging(DockCommand.setLimits(limits).jsonLine(time: 0.7)), at: 0.7)
        #expect(refused.count == 1 && Self.object(refused[0])["code"] as? String == "invalidRequest" && Self.object(refused[0])["id"] as? Int == 11, "\(refused)")
    }

    @Test(.onTestThreads) func aButtonsIdIsNotARequestsAndHugeOrOddIdsAreHandled() {
        #expect(DockReply(line: #"{"type":"accessoryEvent","event":"button","id":1,"pressed":true}"#)?.id == nil)
        // An accessory event this client does not know reaches the app by name, not dropped.
        #expect(DockMessage(line: #"{"type":"accessoryEvent","event":"dialTurned","steps":3}"#) == .accessoryEvent(.unknown("dialTurned")))
        #expect(DockMessage(line: #"{"type":"accessoryEvent"}"#) == nil)
        #expect(DockReply(line: #"{"id":3,"type":"done","command":"animate","time":2.5}"#) == DockReply(message: .done(command: "animate", time: 2.5), id: .number(3)))
        // A move says where it goes: a relative one from where the dock was, within the limits.
        #expect(DockMessage(line: #"{"type":"done","command":"setOrientation","time":1.0,"target":{"x":0.1,"y":-0.5,"z":0.0}}"#)
                == .done(command: "setOrientation", time: 1, target: DockOrientation(x: 0.1, y: -0.5, z: 0)))
        var dock = RequestIDTests.session()
        _ = dock.handle(#"{"command":"setAngularVelocity","velocity":{"x":0,"y":0.5,"z":0}}"#, at: 0)
        let relative = dock.handle(#"{"id":1,"time":1,"command":"setOrientation","orientation":{"x":9,"y":9,"z":0},"duration":0,"relative":true}"#, at: 1)
        let target = relative.first.flatMap { line -> DockOrientation? in if case .done(_, _, let t)? = DockMessage(line: line) { t } else { nil } }
        let turned = dock.dock.position.y
        #expect(target.map { abs($0.x - 0.52) < 1e-4 && abs($0.y - (turned + 9)) < 1e-4 } == true,
                "pitch clamped to its range, yaw 9 rad on from \(turned): \(relative)")
        #expect(RequestID.text("a\"b").tagging(#"{"type":"x"}"#) == #"{"id":"a\"b","type":"x"}"#)
        // Error codes read back as DockKit's errors; one none of them is, as unknown with its words.
        #expect(DockError(code: "invalidRequest", message: "invalid request: bad x") == .invalidRequest("bad x"))
        #expect(DockError(code: "overheated", message: "motor too hot") == .unknown("overheated: motor too hot"))
        #expect(DockError(code: "unknown", message: "unknown: lost") == .unknown("lost") && DockError.unknown("lost").code == "unknown")
        #expect(RequestID.number(-5).tagging("{}") == #"{"id":-5}"#)
        var session = Self.session()
        for line in [#"{"id":1e300,"command":"getBattery"}"#, #"{"id":null,"command":"getBattery"}"#, #"{"id":"","command":"getBattery"}"#] {
            let answers = session.handle(line, at: 0)
            #expect(answers.count == 1, "\(line): \(answers)")
        }
    }

    /// A client connected to docksim (another process) on its socket.
    static func connect(_ docksim: DocksimProcess) async throws -> DockAccessoryManager {
        var manager: DockAccessoryManager?
        await awaitWhile(atMost: .seconds(10), every: .milliseconds(50)) {
            manager = try? DockAccessoryManager(socketPath: docksim.socket)
            return manager == nil
        }
        return try #require(manager)
    }

    /// The error code a call threw, `nil` when it returned.
    static func code(_ call: () async throws(DockError) -> Void) async -> String? {
        do { try await call(); return nil } catch { return error.code }
    }

    @Test func eachCallGetsItsOwnAnswerFromADockInAnotherProcess() async throws {
        let docksim = try await DocksimProcess.started()
        defer { withExtendedLifetime(docksim) {} }  // alive to the end, not to its last use
        let dock = try await Self.connect(docksim)
        defer { dock.disconnect() }
        let errors = Collected.from(dock.errors)
        let own = try await dock.limits()
        var wide = own
        wide.yaw?.maximumSpeed = (own.yaw?.maximumSpeed ?? 1) * 10
        // Three calls in flight at once: each gets its own answer.
        async let moving = Self.code { () async throws(DockError) in try await dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 0.3, z: 0))) }
        async let rolling = Self.code { () async throws(DockError) in try await dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 0, z: 0.3))) }
        async let widening = Self.code { () async throws(DockError) in _ = try await dock.setLimits(wide) }
        let (a, b, c) = await (moving, rolling, widening)
        #expect(a == nil, "a good command returns")
        #expect(b != nil, "roll on a dock without roll throws at its own call")
        #expect(c == "invalidRequest", "limits beyond the dock's are refused")
        var narrow = own
        narrow.yaw = AxisLimits(range: -0.5...0.5, maximumSpeed: 0.4, maximumAcceleration: 2)
        let held = try await dock.setLimits(narrow)
        #expect(held.yaw?.range == -0.5...0.5 && held.yaw?.maximumSpeed == 0.4)
        #expect(try await dock.limits().yaw?.maximumSpeed == 0.4)
        let state = try await dock.motionState()
        #expect(state.position.y.isFinite && abs(state.position.y) <= 0.5 + 1e-6, "\(state)")
        let streamed = await errors.items
        #expect(streamed.isEmpty, "errors of calls with ids go to their calls, not the error stream: \(streamed)")
    }

    /// DockKit's setOrientation with a duration: the move takes that long, and its progress
    /// completes when it ends (read from docksim's motion states, every 20 ms).
    @Test func aFourSecondOrientationTakesFourSecondsAndItsProgressCompletesThen() async throws {
        let docksim = try await DocksimProcess.started(["--state-interval", "0.02"])
        defer { withExtendedLifetime(docksim) {} }
        let dock = try await Self.connect(docksim)
        defer { dock.disconnect() }
        // Every state this test's own reader gets on the way (a reader that falls behind gets
        // only the newest: on a busy machine, few).
        let seen = Collected.from(try dock.motionStates)
        let progress = try await dock.setOrientation(DockOrientation(x: 0.1, y: 0.6, z: 0), duration: 4)
        #expect(!progress.isFinished)
        let end = try await progress.completion()
        let began = try #require(progress.began)
        let took = end.time - began
        // The dock arrived between the last state seen short of the target and the first seen
        // at it (`end`). The simulated motors take 4 s to within 0.1 s (FramingTests, on a
        // simulated clock); across processes the states come every 20 ms, and a starved reader
        // sees the arrival late: with both cores kept busy beside the suite, the first state at
        // the target it got was stamped 7.8 s. So: never at the target before 3.85 s, and still
        // short of it after 5 s never (a move at the wrong speed would be).
        let shortOfIt = await seen.items.filter { $0.time < end.time && abs($0.position.y - 0.6) > 2e-3 }.map(\.time).max() ?? began
        print(String(format: "setOrientation over 4 s: began at %.3f, last seen short of the target at %.3f, at it at %.3f s of docksim's clock (%.3f s)",
                     began, shortOfIt, end.time, took))
        #expect(took > 3.85 && shortOfIt - began < 5, "at the target after \(took) s, short of it after \(shortOfIt - began) s")
        #expect(abs(end.position.y - 0.6) < 2e-3 && abs(end.position.x - 0.1) < 2e-3, "\(end)")
        #expect(progress.fractionCompleted == 1)
        // A target beyond the pitch range: the move ends where the dock stops, at the limit.
        let beyond = try await dock.setOrientation(DockOrientation(x: 2, y: 0.6, z: 0), duration: 0.5)
        let stopped = try await beyond.completion()
        let pitch = try #require(try await dock.limits().pitch).range
        #expect(abs(stopped.position.x - pitch.upperBound) < 2e-3, "\(stopped), \(pitch)")
    }

    /// An animation's progress completes when docksim has played it, back where it began.
    @Test func anAnimationsProgressCompletesWhenItHasPlayed() async throws {
        let docksim = try await DocksimProcess.started(["--state-interval", "0.02"])
        defer { withExtendedLifetime(docksim) {} }
        let dock = try await Self.connect(docksim)
        defer { dock.disconnect() }
        let progress = try await dock.animate(.yes)
        let end = try await progress.completion()
        let began = try #require(progress.began)
        print(String(format: "animation yes (%.2f s): played from %.3f to %.3f s of docksim's clock", DockAnimation.yes.duration, began, end.time))
        // Never over before its length. How late the state that tells its end comes depends on
        // the machine (see the 4 s move): with both cores kept busy it came 7 s late once (docksim
        // starved), so no upper bound; the end is docksim's own (the dock back where it began).
        #expect(end.time - began >= DockAnimation.yes.duration - 0.05, "\(began) -> \(end)")
        #expect(abs(end.position.x) < 2e-3 && abs(end.position.y) < 2e-3, "back where it began: \(end)")
        #expect(progress.fractionCompleted == 1)
    }

    @Test func aDockThatHangsUpEndsTheCallsAndSaysSo() async throws {
        var docksim: DocksimProcess? = try await DocksimProcess.started()
        let dock = try await Self.connect(docksim!)
        let states = Collected.from(dock.stateChanges)
        _ = try await dock.motionState()
        docksim = nil  // SIGTERM, waited for
        #expect(await Self.code { () async throws(DockError) in try await dock.perform(.setAngularVelocity(.zero)) } == "notConnected")
        await awaitWhile(atMost: .seconds(2), every: .milliseconds(10)) { await states.items.last != .disconnected }
        let changes = await states.items
        #expect(changes.last == .disconnected, "\(changes)")
    }
}

/// The example program of the client API (Examples/DockClient), run as a user would, against
/// docksim in another process.
@Suite struct ClientExampleTests {
    @Test(.onTestThreads) func theExampleDrivesDocksimAndSaysWhatItDid() throws {
        let example = URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent().appendingPathComponent("dock-client-example").path
        let docksim = try DocksimProcess()
        defer { withExtendedLifetime(docksim) {} }  // alive to the end, not to its last use
        let run = try ToolRun.run(example, [docksim.socket])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let out = run.stdout
        #expect(out.contains("docked: ") && out.contains("system tracking off") && out.contains("system tracking on"), "\(out)")
        #expect(out.contains("refused: invalidRequest"), "\(out)")
        // 0.5 s at 0.3 rad/s, less the ramps (more on a slow machine); then the orientation asked for.
        let pan = out.split(separator: "\n").first { $0.hasPrefix("panned") }.flatMap { $0.split(separator: " ").dropLast().last }.flatMap { Double($0) }
        #expect(pan.map { $0 > 0.05 && $0 < 0.4 } == true, "\(out)")
        #expect(out.contains("moved to pan -0.200, tilt 0.050 rad"), "\(out)")
        let usage = try ToolRun.run(example, [])
        #expect(usage.status == 2 && usage.stdout.contains("usage:"))
        let nobody = try ToolRun.run(example, ["/tmp/no-dock-\(UUID().uuidString.prefix(6)).sock"])
        #expect(nobody.status == 1 && nobody.stdout.contains("dock-client-example:"), "\(nobody.stdout)")
     }

    /// A program that speaks to a dock links the client library alone: no OpenCV, FFmpeg, V4L2 or
    /// ALSA to install beside it.
    @Test(.onTestThreads, arguments: ["dock-client-example", "dockkit-samples"])
    func aClientProgramLinksNoImageSoundOrCameraLibrary(name: String) throws {
        let program = URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent().appendingPathComponent(name).path
        let libraries = try ToolRun.run("/usr/bin/ldd", [program])
        #expect(libraries.status == 0 && libraries.stdout.contains("libc.so"), "\(libraries.stdout)\(libraries.stderr)")
        let heavy = libraries.stdout.split(separator: "\n").filter { line in
            ["opencv", "libavformat", "libavcodec", "libswscale", "libv4l", "libasound"].contains { line.contains($0) }
        }
        #expect(heavy.isEmpty, "\(name) links \(heavy)")
    }
}

/// Finding docks: a socket path, or a folder of dock sockets.
@Suite struct DockDiscoveryTests {
    @Test func aFolderOfSocketsGivesItsDocksBusyOrFreeAndNothingElse() async throws {
        let folder = try Fixtures.temporaryFolder().path
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        var pids: [pid_t] = []
        for name in ["a.sock", "b.sock"] {
            pids.append(try ToolRun.spawn(DockSimTests.docksim, ["--socket", "\(folder)/\(name)", "--duration", "600"], stdout: devNull, stderr: devNull).get())
        }
        defer { for pid in pids { kill(pid, SIGTERM); _ = ToolRun.wait(for: pid) } }
        // Not docks: a plain file, and a stale socket nobody listens on.
        #expect(FileManager.default.createFile(atPath: "\(folder)/notes.txt", contents: Data("x".utf8)))
        let stale = try ListeningSocket(path: "\(folder)/stale.sock")
        close(stale.fd)
        await awaitWhile(atMost: .seconds(10)) { !["a.sock", "b.sock"].allSatisfy({ FileManager.default.fileExists(atPath: "\(folder)/\($0)") }) }
        // b's session is held by another client.
        let holder = try LineClient(path: "\(folder)/b.sock")
        try holder.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        #expect(holder.first(within: 20) { $0.hasPrefix(#"{"type":"hello""#) } != nil)
        let found = try await DockAccessoryManager.discover(at: folder, timeout: 20)
        #expect(found.map { ($0.socketPath as NSString).lastPathComponent } == ["a.sock", "b.sock"], "\(found)")
        #expect(found.first?.accessory?.name == "DockSim" && found.last?.isBusy == true, "\(found)")
        let one = try await DockAccessoryManager.discover(at: "\(folder)/a.sock", timeout: 20)
        #expect(one.count == 1 && one[0].accessory?.capabilities.contains("pan") == true, "a's session is free again after discovery: \(one)")
        await #expect(throws: DockError.notConnected) { try await DockAccessoryManager.discover(at: "\(folder)/notes.txt") }
        await #expect(throws: DockError.notConnected) { try await DockAccessoryManager.discover(at: "\(folder)/missing") }
        withExtendedLifetime(holder) {}
    }
}

/// DockKit's code samples as DockTrack client programs (Examples/DockKitSamples), run against
/// docksim alone (the tracker's samples are not possible there, and say so) and against a
/// `track --serve` in front of docksim (every sample does what DockKit's does).
@Suite struct DockKitSamplesTests {
    static var samples: String {
        URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent().appendingPathComponent("dockkit-samples").path
    }

    /// What each sample said: "ok", "not possible here: CODE …", or "failed: …".
    static func outcomes(_ out: String) -> [String: String] {
        var result: [String: String] = [:]
        for line in out.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("==") else { continue }
            let name = String(line[..<colon]), said = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if said == "ok" || said.hasPrefix("not possible here") || said.hasPrefix("failed") { result[name] = said }
        }
        return result
    }

    static func script(_ folder: URL) throws -> String {
        let path = folder.appendingPathComponent("events.jsonl")
        // A button and the shutter every 1.5 s for a minute: the events sample listens until it
        // has heard two.
        let events = stride(from: 1.0, to: 60, by: 0.75).enumerated().map { k, at in
            k % 2 == 0 ? #"{"at":\#(at),"event":"button","id":2,"pressed":true}"# : #"{"at":\#(at),"event":"cameraShutter"}"#
        }
        try (events.joined(separator: "\n") + "\n").write(to: path, atomically: true, encoding: .utf8)
        return path.path
    }

    @Test(.onTestThreads) func theSamplesAgainstDocksimAlone() throws {
        let docksim = try DocksimProcess(["--script", try Self.script(try Fixtures.temporaryFolder())])
        defer { withExtendedLifetime(docksim) {} }
        let run = try ToolRun.run(Self.samples, [docksim.socket])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let outcomes = Self.outcomes(run.stdout)
        // A dock alone has its own tracking switch (read back as set), not a tracker's framing.
        for motor in ["discover", "system-tracking", "velocity", "orientation", "motion-states", "limits", "animate", "battery",
                      "discover-two-readers", "roll-refused"] {
            #expect(outcomes[motor] == "ok", "\(motor): \(outcomes[motor] ?? "nothing")\n\(run.stdout)")
        }
        for tracker in ["select", "custom-tracking", "framing", "region", "tracking-states", "mistakes"] {
            #expect(outcomes[tracker]?.hasPrefix("not possible here: notCapable") == true, "\(tracker): \(outcomes[tracker] ?? "nothing")")
        }
        #expect(run.stdout.contains("at yaw 0.500 rad (target 0.500), 100% done"), "\(run.stdout)")
        // Two readers of one stream each get every state; a late reader starts from now.
        #expect(run.stdout.contains("two readers: 3 and 3 states"), "\(run.stdout)")
        let after = run.stdout.split(separator: "\n").first { $0.hasPrefix("a reader a second late starts") }
            .flatMap { Double($0.split(separator: " ")[6]) }
        #expect(after.map { $0 > 0.7 } == true, "not the states of the second it was away: \(run.stdout)")
        let usage = try ToolRun.run(Self.samples, [])
        #expect(usage.status == 2 && usage.stdout.contains("usage:"))
    }

    @Test(.onTestThreads) func theSamplesAgainstATrackInFrontOfDocksim() throws {
        let folder = try Fixtures.temporaryFolder()
        let docksim = try DocksimProcess(["--script", try Self.script(folder)])
        defer { withExtendedLifetime(docksim) {} }
        let track = try TrackProcess([Fixtures.sample("vtest.avi"), "--loop", "-d", "fast", "--no-face-cues",
                                      "--dock", "unix:\(docksim.socket)"])
        defer { withExtendedLifetime(track) {} }  // running to the end, not to its last use
        let socket = track.socket
        _ = try LineClient(path: socket)  // waits for the socket
        let run = try ToolRun.run(Self.samples, [socket])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let outcomes = Self.outcomes(run.stdout)
        for sample in ["discover", "system-tracking", "select", "custom-tracking", "framing", "region", "velocity", "orientation",
                       "motion-states", "limits", "animate", "tracking-states", "events", "battery", "mistakes",
                       "discover-two-readers", "roll-refused"] {
            #expect(outcomes[sample] == "ok", "\(sample): \(outcomes[sample] ?? "nothing")\n\(run.stdout)")
        }
        #expect(run.stdout.contains("region of interest: x 0.25, y 0.0, width 0.5, height 1.0"), "\(run.stdout)")
        #expect(run.stdout.contains("a roll is refused: notCapable") && run.stdout.contains("both readers were told of the dock"), "\(run.stdout)")
        #expect(run.stdout.contains("a motor command while tracking is refused: invalidRequest")
                && run.stdout.contains("an observation a second after the last is refused: rateTooLow"), "\(run.stdout)")
        #expect(run.stdout.contains("event: button 2 pressed") || run.stdout.contains("event: shutter"), "the dock's events through the tracker: \(run.stdout)")
        print("dockkit-samples through track --serve:\n\(run.stdout)")
    }
}
