import DockTrack
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The DockKit contract as an app meets it through `docktrack track --serve` in front of
/// docksim in another process: every answer goes to its own request, and what a client
/// changed is undone when it goes.
@Suite struct ClientContractTests {
    /// A `track` run in front of docksim, with a client that said hello and got the hello back.
    struct Run {
        let docksim: DocksimProcess
        let track: TrackProcess
        let client: LineClient
        let hello: String

        init() throws {
            docksim = try DocksimProcess()
            track = try TrackProcess([Fixtures.sample("vtest.avi"), "--loop", "-d", "fast", "--no-face-cues",
                                      "--dock", "unix:\(docksim.socket)"])
            client = try LineClient(path: track.socket)
            try client.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
            hello = try #require(client.first(within: 30) { $0.hasPrefix(#"{"type":"hello""#) }, "\(track.stderr)")
        }

        /// Sends `line` with `id` and waits for the first answer carrying that id.
        func ask(_ id: Int, _ request: String) throws -> String {
            try client.send(RequestID.number(id).tagging(request))
            return client.first(within: 20) { $0.hasPrefix(#"{"id":\#(id),"#) } ?? "no answer to \(id)"
        }

        /// The tracker's time now (its motion state's), asked with `id`.
        func trackerTime(_ id: Int) throws -> Double? {
            if case .motionState(let motion)? = DockMessage(line: try ask(id, #"{"command":"getMotionState"}"#)) { motion.time } else { nil }
        }

        /// Waits until `seconds` have passed on the tracker's clock (asking with ids from `id`):
        /// a loaded machine delays the test, not the tracker's time.
        func waitOnTrackersClock(_ seconds: Double, askingFrom id: Int) throws {
            guard let start = try trackerTime(id) else { return }
            var next = id + 1
            waitWhile(atMost: .seconds(60), every: .milliseconds(50)) {
                defer { next += 1 }
                return ((try? trackerTime(next)) ?? nil).map { $0 < start + seconds } ?? true
            }
        }
    }

    @Test(.onTestThreads) func eachAnswerGoesToItsOwnRequestThroughATrackInFrontOfADockInAnotherProcess() throws {
        let run = try Run()
        #expect(try run.ask(1, #"{"command":"setSystemTracking","enabled":false}"#) == #"{"id":1,"type":"done","command":"setSystemTracking"}"#)
        // docksim refuses a negative duration; track takes it to docksim, whose refusal is this
        // request's answer, not the next one's.
        let refused = try run.ask(2, #"{"command":"setOrientation","orientation":{"x":0,"y":0.2,"z":0},"duration":-5}"#)
        #expect(refused.contains(#""type":"error""#) && refused.contains(#""code":"invalidRequest""#), "\(refused)")
        try run.waitOnTrackersClock(0.6, askingFrom: 100)  // orientations: at most about two a second
        let moved = try run.ask(3, #"{"command":"setOrientation","orientation":{"x":0,"y":0.2,"z":0},"duration":0.5}"#)
        #expect(moved.contains(#""type":"done","command":"setOrientation""#), "\(moved)")
        // docksim has no roll: the roll velocity is refused at its own id, the stop after it done.
        let roll = try run.ask(4, #"{"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":0.3}}"#)
        #expect(roll.contains(#""code":"notCapable""#), "\(roll)")
        let stop = try run.ask(5, #"{"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":0}}"#)
        #expect(stop == #"{"id":5,"type":"done","command":"setAngularVelocity"}"#, "\(stop)")
        // An orientation with a roll the dock cannot make is refused too, not done without it.
        try run.waitOnTrackersClock(0.6, askingFrom: 10_000)
        let rolled = try run.ask(6, #"{"command":"setOrientation","orientation":{"x":0,"y":0.1,"z":0.2},"duration":0.5}"#)
        #expect(rolled.contains(#""code":"notCapable""#), "\(rolled)")
        // Several in flight at once: each answered at its own id, the refused one refused.
        try run.client.send(#"{"id":10,"command":"setAngularVelocity","velocity":{"x":0,"y":0.1,"z":0}}"#)
        try run.client.send(#"{"id":11,"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":-0.2}}"#)
        try run.client.send(#"{"id":12,"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":0}}"#)
        var answers: [String: String] = [:]
        while answers.count < 3, let line = run.client.first(within: 20, where: { $0.hasPrefix(#"{"id":1"#) }) {
            for id in ["10", "11", "12"] where line.hasPrefix(#"{"id":\#(id),"#) { answers[id] = line }
        }
        #expect(answers["10"]?.contains(#""type":"done""#) == true, "\(answers)")
        #expect(answers["11"]?.contains(#""code":"notCapable""#) == true, "\(answers)")
        #expect(answers["12"]?.contains(#""type":"done""#) == true, "\(answers)")
    }

    @Test(.onTestThreads) func whatAClientChangedIsGivenBackWhenItHangsUp() throws {
        let first = try Run()
        // The hello says the limits in force and the dock's own.
        let hello = try #require(DockTestLine(first.hello))
        let started = try #require(hello.limits("limits")), dockOwn = try #require(hello.limits("dockLimits"))
        #expect(started.yaw.maximumSpeed > 0.5 && dockOwn.yaw.maximumSpeed >= started.yaw.maximumSpeed, "\(first.hello)")
        let mode = try first.ask(1, #"{"command":"getFramingMode"}"#), region = try first.ask(2, #"{"command":"getRegionOfInterest"}"#)
        #expect(try first.ask(3, #"{"command":"setFramingMode","mode":"left"}"#).contains(#""type":"done""#))
        #expect(try first.ask(4, #"{"command":"setRegionOfInterest","rect":{"x":0.5,"y":0,"width":0.5,"height":1},"origin":"upperLeft"}"#)
            .contains(#""type":"done""#))
        let narrowed = try first.ask(5, #"{"command":"setLimits","limits":{"yaw":{"minimum":-1,"maximum":1,"maximumSpeed":0.5}}}"#)
        #expect(narrowed.contains(#""type":"limits""#) && narrowed.contains(#""maximumSpeed":0.5"#), "\(narrowed)")
        #expect(try first.ask(6, #"{"command":"setSystemTracking","enabled":false}"#).contains(#""type":"done""#))
        // The client hangs up; the next one finds the run as it started.
        let (docksim, track) = (first.docksim, first.track)
        shutdown(first.client.fd, Int32(SHUT_RDWR))
        var answers: [String] = []
        var second: LineClient?
        // The server takes the next client once it has seen the first one go.
        try waitWhile(atMost: .seconds(30), every: .milliseconds(100)) {
            let next = try LineClient(path: track.socket)
            second = next
            try next.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
            return !(next.next(within: 10)?.hasPrefix(#"{"type":"hello""#) ?? false)
        }
        if let next = second {
            for (id, request) in [#"{"command":"getFramingMode"}"#, #"{"command":"getRegionOfInterest"}"#,
                                  #"{"command":"getLimits"}"#, #"{"command":"getSystemTracking"}"#].enumerated() {
                try next.send(RequestID.number(id + 1).tagging(request))
                answers.append(next.first(within: 20) { $0.hasPrefix(#"{"id":\#(id + 1),"#) } ?? "no answer")
            }
        }
        withExtendedLifetime((docksim, first)) {}
        try #require(answers.count == 4, "no second session: \(track.stderr)")
        #expect(answers[0] == mode.replacingOccurrences(of: #"{"id":1,"#, with: #"{"id":1,"#), "\(answers[0]) against \(mode)")
        #expect(answers[1] == region.replacingOccurrences(of: #"{"id":2,"#, with: #"{"id":2,"#), "\(answers[1]) against \(region)")
        // Given back as the client went: the next client reads them at once (the dock behind is
        // told at the next frame).
        let limits = try #require(DockTestLine(answers[2])?.limits("limits"), "\(answers[2])")
        _ = second
        #expect(limits == started, "\(answers[2])")
        #expect(answers[3].contains(#""enabled":true"#), "\(answers[3])")
        #expect(track.stderr.contains("session closed; system tracking back on, framing mode back to"), "\(track.stderr)")
    }
}

/// A dock protocol line's limits objects, decoded.
struct DockTestLine {
    let object: [String: Any]
    let line: String

    init?(_ line: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
        (self.object, self.line) = (object, line)
    }

    func limits(_ key: String) -> DockLimits? {
        guard let value = object[key], let data = try? JSONSerialization.data(withJSONObject: value) else { return nil }
        return try? JSONDecoder().decode(DockLimits.self, from: data)
    }
}

/// The client's streams as DockKit's: each `for await` its own stream, starting from the current
/// state, never from old history.
@Suite struct ClientStreamTests {
    /// The first element of `stream` within `seconds`, or nil.
    /// `track --serve` over vtest.avi (looping, real time) in front of `docksim`, both in other
    /// processes, and a client connected to the tracker; keep the processes alive to the end.
    static func trackerBefore(_ docksim: DocksimProcess) async throws -> (track: TrackProcess, client: DockAccessoryManager) {
        let track = try TrackProcess([Fixtures.sample("vtest.avi"), "--loop", "-d", "fast", "--no-face-cues", "--dock", "unix:\(docksim.socket)"])
        _ = try LineClient(path: track.socket)  // waits for the socket
        return (track, try await DockAccessoryManager.connect(to: track.socket, helloTimeout: 120))
    }

    /// The first element of `stream` within `seconds`.
    static func first<Element: Sendable>(of stream: AsyncStream<Element>, within seconds: Double) async -> Element? {
        await prefix(1, of: stream, within: seconds).first
    }

    /// The first `count` elements of `stream` within `seconds`.
    static func prefix<Element: Sendable>(_ count: Int, of stream: AsyncStream<Element>, within seconds: Double) async -> [Element] {
        await withTaskGroup(of: [Element]?.self) { group in
            group.addTask {
                var got: [Element] = []
                for await element in stream {
                    got.append(element)
                    if got.count == count { break }
                }
                return got
            }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }

    @Test func lateAndTwinReadersOfADocksimStreamGetCurrentStatesAndTheBatteryAtOnce() async throws {
        let docksim = try await DocksimProcess.started(["--battery", "0.15", "--other-battery", "remote:0.5"])
        defer { withExtendedLifetime(docksim) {} }
        let dock = try await DockAccessoryManager.connect(to: docksim.socket, helloTimeout: 120)
        defer { dock.disconnect() }
        // The batteries arrive on subscribe, without a getBattery and without a change; low as
        // the dock says.
        let batteries = await Self.prefix(2, of: try dock.batteryStates, within: 120)
        #expect(batteries.map(\.name) == ["internal", "remote"], "\(batteries)")
        #expect(batteries.first?.lowBattery == true && batteries.first?.reportedLow == true, "\(batteries)")
        // A reader that comes 2 s late starts from the dock's motion now, not from the 2 s of
        // history after the last state read (a loaded machine may delay the reader, never the dock).
        let before = try #require(await Self.first(of: try dock.motionStates, within: 120))
        // 2 s on the dock's clock (a loaded machine may delay the reader, never the dock).
        await awaitWhile(atMost: .seconds(60), every: .milliseconds(50)) {
            (try? await dock.motionState()).map { $0.time < before.time + 2 } ?? true
        }
        let late = try #require(await Self.first(of: try dock.motionStates, within: 120))
        #expect(late.time - before.time > 1.5, "the late reader starts \(late.time - before.time) s after the last state read")
        // Two readers of the same property each get every state, in order.
        let (first, second) = (try dock.motionStates, try dock.motionStates)
        async let one = Self.prefix(3, of: first, within: 120)
        async let two = Self.prefix(3, of: second, within: 120)
        let (a, b) = await (one, two)
        #expect(a.count == 3 && b.count == 3, "\(a.count) and \(b.count) states")
        #expect(zip(a, a.dropFirst()).allSatisfy { $0.time <= $1.time } && zip(b, b.dropFirst()).allSatisfy { $0.time <= $1.time })
        #expect(!Set(a.map(\.time)).isDisjoint(with: b.map(\.time)), "the two readers saw the same states")
        // A second client is refused with its own code.
        await #expect(throws: DockError.sessionInUse) { _ = try await DockAccessoryManager.connect(to: docksim.socket, helloTimeout: 120) }
    }

    /// As DockKit's stream getters: a stream the dock cannot fill is refused with `notCapable`
    /// (DockKit's notSupportedByDevice) instead of a reader waiting for ever, and every getter
    /// throws `notConnected` once the connection has ended.
    @Test func aStreamTheDockCannotFillIsRefusedAndAnEndedConnectionIsNotConnected() async throws {
        let docksim = try await DocksimProcess.started()
        defer { withExtendedLifetime(docksim) {} }
        let dock = try await DockAccessoryManager.connect(to: docksim.socket, helloTimeout: 120)
        let capabilities = try await dock.accessory().capabilities
        #expect(!capabilities.contains("trackingStates") && capabilities.contains("battery") && capabilities.contains("buttons"), "\(capabilities)")
        #expect(throws: DockError.notCapable("this dock sends no tracking states (it tracks nothing itself)")) { _ = try dock.trackingStates }
        // What docksim does send flows.
        #expect(await Self.first(of: try dock.motionStates, within: 120) != nil)
        #expect(await Self.first(of: try dock.batteryStates, within: 120) != nil)
        _ = try dock.accessoryEvents
        dock.disconnect()
        #expect(throws: DockError.notConnected) { _ = try dock.motionStates }
        #expect(throws: DockError.notConnected) { _ = try dock.accessoryEvents }
        // Through a tracker, the same docksim's states are there: the tracker says it tracks.
        let served = try await DocksimProcess.started()
        let (track, tracker) = try await Self.trackerBefore(served)
        defer { withExtendedLifetime((served, track)) {} }
        defer { tracker.disconnect() }
        // The tracker says the axes of the dock behind it: docksim pans and tilts, has no roll.
        let axes = try await tracker.accessory().capabilities
        #expect(axes.contains("pan") && axes.contains("tilt") && !axes.contains("roll"), "\(axes)")
        let limits = try await tracker.limits()
        #expect(limits.yaw != nil && limits.pitch != nil && limits.roll == nil, "\(limits)")
        #expect(await Self.first(of: try tracker.trackingStates, within: 120) != nil)
        #expect(await Self.first(of: try tracker.batteryStates, within: 120) != nil, "the dock's battery, relayed")
        // What this run, not the dock, lacks is DockKit's notSupported: an audio route where no
        // PipeWire graph is followed.
        await #expect(throws: DockError.notSupported("audio route: this run follows no audio graph (PipeWire)")) { _ = try await tracker.audioRoute() }
    }

    /// DockKit's motion state timestamp and tracking state time are wall times: each state says
    /// its own (`date`) beside the dock's or the run's clock (`time`), from docksim and through
    /// track --serve; on docksim the two differ by the same amount on every state.
    @Test func statesSayTheirWallTime() async throws {
        let docksim = try await DocksimProcess.started(["--state-interval", "0.05"])
        // The tracker's client (docksim's one session is the tracker's).
        let (track, tracker) = try await Self.trackerBefore(docksim)
        defer { withExtendedLifetime((docksim, track)) {} }
        defer { tracker.disconnect() }
        let before = Date()
        let states = await Self.prefix(3, of: try tracker.trackingStates, within: 120)
        let motions = await Self.prefix(3, of: try tracker.motionStates, within: 120)
        let after = Date()
        #expect(states.count == 3 && motions.count == 3)
        for state in states {
            let date = try #require(state.date, "a tracking state without its wall time")
            #expect(date >= before.addingTimeInterval(-5) && date <= after.addingTimeInterval(1), "\(date) not between \(before) and \(after)")
        }
        #expect(zip(states, states.dropFirst()).allSatisfy { ($0.date ?? .distantFuture) <= ($1.date ?? .distantPast) }, "dates in order")
        #expect(motions.allSatisfy { $0.date != nil }, "\(motions)")
        // docksim alone: its own clock and the wall clock, one offset.
        let alone = try await DocksimProcess.started(["--state-interval", "0.05"])
        defer { withExtendedLifetime(alone) {} }
        let dock = try await DockAccessoryManager.connect(to: alone.socket, helloTimeout: 120)
        defer { dock.disconnect() }
        let own = await Self.prefix(5, of: try dock.motionStates, within: 120)
        let offsets = own.compactMap { state in state.date.map { $0.timeIntervalSince1970 - state.time } }
        #expect(offsets.count == 5 && (offsets.max()! - offsets.min()!) < 0.002, "\(offsets)")
        #expect(abs(try #require(own.last?.date).timeIntervalSinceNow) < 60)
    }

    /// A client that speaks another protocol is told notSupported (DockKit's: the method is not
    /// supported here), by docksim and by track --serve alike.
    @Test(.onTestThreads) func aProtocolTheServerDoesNotSpeakIsNotSupported() throws {
        let docksim = try DocksimProcess()
        defer { withExtendedLifetime(docksim) {} }
        let client = try LineClient(path: docksim.socket)
        try client.send(#"{"type":"hello","protocols":["org.example.dock/9"]}"#)
        let answer = client.next(within: 60) ?? ""
        #expect(answer.contains(#""code":"notSupported""#) && answer.contains("org.example.dock/9"), "\(answer)")
        guard case .error(let code, let message)? = DockMessage(line: answer) else {
            Issue.record("not an error: \(answer)")
            return
        }
        #expect(DockError(code: code, message: message) == .notSupported(#"protocols ["org.example.dock/9"]; this dock speaks \#(DockProtocol.name)"#))
    }

    @Test func trackingStatesStartFromTheCurrentFrameAndSayTimeInView() async throws {
        let docksim = try await DocksimProcess.started()
        let (track, dock) = try await Self.trackerBefore(docksim)
        defer { withExtendedLifetime((docksim, track)) {} }
        defer { dock.disconnect() }
        let before = try #require(await Self.first(of: try dock.trackingStates, within: 120))
        let started = try await dock.motionState().time
        // 2 s on the tracker's clock (its motion states' time), however slow the machine.
        await awaitWhile(atMost: .seconds(60), every: .milliseconds(50)) {
            (try? await dock.motionState()).map { $0.time < started + 2 } ?? true
        }
        // Two seconds later a new reader's first state is a current frame (the clip plays at 10
        // frames a second in real time), not the frame after the last one read.
        let late = try #require(await Self.first(of: try dock.trackingStates, within: 120))
        #expect(late.frame - before.frame > 5 || late.frame < before.frame, "frames \(before.frame) then \(late.frame): the first was history")
        // Time in view is on the wire: a person followed for seconds says so.
        var longest = 0.0
        for await state in try dock.trackingStates {
            longest = max(longest, state.subjects.map(\.timeInView).max() ?? 0)
            if longest > 1 { break }
        }
        #expect(longest > 1, "time in view \(longest)")
    }

    @Test func aClientReadsTheDocksOwnLimitsBesideThoseInForce() async throws {
        let docksim = try await DocksimProcess.started()
        defer { withExtendedLifetime(docksim) {} }
        let dock = try await DockAccessoryManager.connect(to: docksim.socket, helloTimeout: 120)
        defer { dock.disconnect() }
        let own = try await dock.dockLimits()
        // docksim has no roll: DockKit's nil, not a range of nothing at speed 0.
        #expect(own.yaw != nil && own.pitch != nil && own.roll == nil, "\(own)")
        var narrower = try await dock.limits()
        narrower.yaw?.maximumSpeed = 0.5
        let held = try await dock.setLimits(narrower)
        let inForce = try await dock.limits()
        #expect(held.yaw?.maximumSpeed == 0.5 && inForce.yaw?.maximumSpeed == 0.5 && inForce.roll == nil)
        // The dock's own stay what they were: what a narrowing can be undone to.
        let after = try await dock.dockLimits()
        #expect(after == own && (own.yaw?.maximumSpeed ?? 0) > 0.5, "\(own) then \(after)")
        // A nil axis keeps the limits in force; a roll asked of a dock without one is notCapable.
        let pitchOnly = try await dock.setLimits(DockAccessory.Limits(pitch: try AxisLimits(positionRange: -0.2..<0.2, maximumSpeed: 1)))
        #expect(pitchOnly.yaw?.maximumSpeed == 0.5 && pitchOnly.pitch?.range == -0.2...0.2, "\(pitchOnly)")
        await #expect(throws: DockError.notCapable("roll")) {
            _ = try await dock.setLimits(DockAccessory.Limits(roll: try AxisLimits(positionRange: -0.2..<0.2, maximumSpeed: 1)))
        }
        await #expect(throws: DockError.invalidRequest("limits name no axis (pitch, yaw or roll)")) { _ = try await dock.setLimits(DockAccessory.Limits()) }
    }

    @Test func rateErrorsSayTheirOwnLimitAndTheSessionInUseHasACode() {
        #expect(DockError(code: "rateTooHigh", message: DockError.rateTooHigh(limit: 30).description) == .rateTooHigh(limit: 30))
        #expect(DockError(code: "rateTooLow", message: DockError.rateTooLow(limit: 10).description) == .rateTooLow(limit: 10))
        #expect(DockError(code: "rateTooHigh", message: "rate too high: at most 2 per second") == .rateTooHigh(limit: 2))
        #expect(DockError(code: "sessionInUse", message: "whatever") == .sessionInUse)
    }
}

/// A camera orientation is a turn of coordinates (DockKit's `CameraInformation.orientation`).
@Suite struct CameraOrientationTests {
    @Test func observationsFromATurnedPictureAreTurnedUpright() throws {
        // A face at the top left of a picture made in portrait (turned a quarter from upright):
        // once upright it is at the top right, its width and height swapped.
        let face = Observation(type: .humanFace, rect: UnitRect(x: 0.1, y: 0.7, width: 0.2, height: 0.1), confidence: 0.9)
        let portrait = CameraInformation(fieldOfView: 40, referenceDimensions: .init(width: 1080, height: 1920), orientation: .portrait)
        let upright = try portrait.upright(face).rect
        #expect(abs(upright.x - 0.7) < 1e-9 && abs(upright.y - 0.7) < 1e-9 && abs(upright.width - 0.1) < 1e-9 && abs(upright.height - 0.2) < 1e-9,
                "\(upright)")
        // Each orientation keeps a rectangle inside the picture, and a round trip through the
        // opposite quarter turn gives it back.
        let rect = UnitRect(x: 0.15, y: 0.25, width: 0.3, height: 0.4)
        for orientation in CameraOrientation.allCases {
            #expect(orientation.upright(rect).isRegionOfPicture, "\(orientation)")
        }
        let back = CameraOrientation.portraitUpsideDown.upright(CameraOrientation.portrait.upright(rect))
        #expect(abs(back.x - rect.x) < 1e-9 && abs(back.y - rect.y) < 1e-9 && abs(back.width - rect.width) < 1e-9)
        let twice = CameraOrientation.landscapeLeft.upright(CameraOrientation.landscapeLeft.upright(rect))
        #expect(abs(twice.x - rect.x) < 1e-9 && abs(twice.y - rect.y) < 1e-9 && abs(twice.height - rect.height) < 1e-9)
        // The picture's 40-degree width is the upright picture's height.
        let model = try portrait.cameraModel(aspectOf: .webcam)
        #expect(abs(model.verticalFieldOfView - 40 * .pi / 180) < 1e-9 && model.horizontalFieldOfView > model.verticalFieldOfView, "\(model)")
        // A name none is refuses the request as it is read.
        #expect(throws: DockError.invalidRequest("camera orientation sideways: one of \(CameraOrientation.allCases.map(\.rawValue).joined(separator: ", "))")) {
            _ = try JSONDecoder().decode(TrackingRequest.self, from: Data(#"{"command":"track","observations":[],"camera":{"fieldOfView":40,"orientation":"sideways"}}"#.utf8))
        }
        _ = try JSONDecoder().decode(TrackingRequest.self, from: Data(#"{"command":"track","observations":[],"camera":{"fieldOfView":40,"orientation":"unknown"}}"#.utf8))
        // DockKit's faceUp and faceDown (a device lying flat) and unknown are accepted, the picture taken as it comes.
        for flat in [CameraOrientation.faceUp, .faceDown, .unknown] {
            let lying = CameraInformation(fieldOfView: 40, orientation: flat)
            let taken = try lying.upright(face).rect
            #expect(abs(taken.x - 0.1) < 1e-9 && abs(taken.y - 0.7) < 1e-9 && abs(taken.width - 0.2) < 1e-9 && abs(taken.height - 0.1) < 1e-9,
                    "\(flat): \(taken)")
            #expect(try lying.cameraModel(aspectOf: .webcam).horizontalFieldOfView > 0, "\(flat)")
        }
    }
}

/// The contract by construction: every kind of line a dock or a tracker writes reads back, in
/// the client's one typed reader (``DockMessage``), as the message it means. A field renamed or
/// dropped on one side fails here, not in an app.
@Suite struct WireContractTests {
    @Test func everyLineAServerWritesReadsBackAsItsMessage() throws {
        let identity = AccessoryIdentity(name: "desk", identifier: UUID(), firmwareVersion: "2.1", hardwareModel: "pt1")
        let hello = DockSession.helloLine(identity, capabilities: [.pan, .tilt, .battery], docked: true, trackingButtonEnabled: false,
                                          limits: .standard, dockLimits: .standard)
        guard case .hello(let accessory)? = DockMessage(line: hello) else { Issue.record("\(hello)"); return }
        #expect(accessory.name == "desk" && accessory.category == .trackingStand && accessory.identifier == identity.identifier
                && accessory.firmwareVersion == "2.1" && accessory.hardwareModel == "pt1" && accessory.capabilities == ["pan", "tilt", "battery"]
                && !accessory.trackingButtonEnabled, "\(accessory)")
        let limits = DockSession.limitsLine(.standard, dockLimits: .standard, time: 1)
        guard case .limits(let read, let dock)? = DockMessage(line: limits), let dock else { Issue.record("\(limits)"); return }
        #expect(abs(dock.yaw.maximumSpeed - DockLimits.standard.yaw.maximumSpeed) < 1e-3)
        #expect(abs(read.yaw.maximumSpeed - DockLimits.standard.yaw.maximumSpeed) < 1e-3 && abs(read.pitch.range.upperBound - DockLimits.standard.pitch.range.upperBound) < 1e-3)
        for error in [DockError.notCapable("roll"), .invalidRequest("duration >= 0"), .invalidated, .notConnected, .rateTooHigh(limit: 30),
                      .rateTooLow(limit: 10), .noSubjectFound, .sessionInUse, .unknown("the motor")] {
            guard case .error(let code, let message)? = DockMessage(line: DockSession.errorLine(error, line: 3)) else {
                Issue.record("\(error)")
                continue
            }
            #expect(DockError(code: code, message: message) == error, "\(error)")
        }
        let target = DockVector(x: 0.1, y: -0.5, z: 0)
        #expect(DockMessage(line: DockSession.doneLine("setOrientation", movingAt: 2.5, target: target))
                == .done(command: "setOrientation", time: 2.5, target: target))
        #expect(DockMessage(line: DockSession.doneLine("setLimits")) == .done(command: "setLimits", time: nil, target: nil))
        for setting in [TrackerSetting.systemTracking(false), .framingMode(.right), .regionOfInterest(upperLeft: UnitRect(x: 0.25, y: 0, width: 0.5, height: 1))] {
            #expect(DockMessage(line: setting.jsonLine) == .setting(setting), "\(setting.jsonLine)")
        }
        var battery = BatteryState(name: "remote", level: 0.5, chargeable: false)
        battery.reportedLow = false
        #expect(DockMessage(line: battery.jsonLine) == .battery(battery), "\(battery.jsonLine)")
        let motion = MotionState(time: 3.25, position: DockVector(x: 0.1, y: 0.2, z: 0), velocity: DockVector(x: 0, y: -0.3, z: 0))
        #expect(DockMessage(line: motion.jsonLine) == .motionState(motion), "\(motion.jsonLine)")
        let subject = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.1, y: 0.2, width: 0.3, height: 0.6), saliencyRank: 1,
                                     speakingConfidence: 0.25, lookingAtCameraConfidence: 0.75, timeInView: 4.5)
        let record = SubjectStatesRecord(frame: 12, time: 0.5, subjects: [subject])
        #expect(DockMessage(line: record.trackingStateLine) == .trackingState(record), "\(record.trackingStateLine)")
        // docksim's scripted news, as it writes it.
        var session = DockSession(identity: identity, script: [ScriptedEvent(at: 0.1, event: "button", id: 2, pressed: true),
                                                               ScriptedEvent(at: 0.2, event: "cameraZoom", factor: 2),
                                                               ScriptedEvent(at: 0.3, event: "undocked"),
                                                               ScriptedEvent(at: 0.4, event: "trackingButton", enabled: false)])
        _ = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#, at: 0)
        let news = session.advance(to: 1).compactMap(DockMessage.init(line:)).filter { if case .motionState = $0 { false } else { true } }
        #expect(news.contains(.accessoryEvent(.button(id: 2, pressed: true))) && news.contains(.accessoryEvent(.cameraZoom(factor: 2)))
                && news.contains(.dockEvent("undocked")) && news.contains(.trackingButton(enabled: false)), "\(news)")
        // A line with a field of the wrong kind is no message, not a message with a default.
        #expect(DockMessage(line: #"{"type":"systemTracking","enabled":"yes"}"#) == nil)
        #expect(DockMessage(line: #"{"type":"selected","identifier":"nobody"}"#) == nil)
        #expect(DockReply(line: #"{"id":"a","type":"done","command":"animate","time":1.0}"#)?.id == .text("a"))
        #expect(DockReply(line: #"{"type":"accessoryEvent","event":"button","id":4,"pressed":false}"#)?.id == nil, "a button's id is no request's")
    }
}

/// The kind of each end of an audio route, from PipeWire's node properties as real machines have them.
@Suite struct AudioPortTypeTests {
    @Test func pipeWireNodesHaveTheirKindsOfDevice() {
        func type(_ name: String, _ extra: [String: String] = [:], input: Bool) -> AudioPortType {
            AudioPortType(pipeWireProperties: ["node.name": name, "media.class": input ? "Audio/Source" : "Audio/Sink"].merging(extra) { $1 },
                          isInput: input)
        }
        #expect(type("alsa_input.pci-0000_00_1f.3.analog-stereo", ["device.bus": "pci", "device.form-factor": "internal"], input: true) == .builtInMicrophone)
        #expect(type("alsa_output.pci-0000_00_1f.3.analog-stereo", ["device.bus": "pci"], input: false) == .builtInSpeaker)
        #expect(type("alsa_output.pci-0000_00_1f.3.hdmi-stereo", ["device.bus": "pci"], input: false) == .hdmi)
        #expect(type("alsa_input.usb-046d_HD_Pro_Webcam_C920-02.analog-stereo", ["device.bus": "usb", "device.form-factor": "webcam"], input: true) == .usbAudio)
        #expect(type("alsa_output.usb-Logitech_G435-00.analog-stereo", ["device.bus": "usb", "device.form-factor": "headset"], input: false) == .headphones)
        #expect(type("alsa_input.usb-Logitech_G435-00.mono-fallback", ["device.bus": "usb", "device.form-factor": "headset"], input: true) == .headsetMicrophone)
        #expect(type("bluez_output.AA_BB_CC_DD_EE_FF.1", ["device.api": "bluez5"], input: false) == .bluetooth)
        #expect(type("test-microphone", ["media.class": "Audio/Source/Virtual", "factory.name": "support.null-audio-sink"], input: true) == .virtual)
        #expect(type("something", input: false) == .unknown)
        // A client reads a type it does not know as unknown, not as an unreadable route.
        guard case .audioRoute(let route)? = DockMessage(line: #"{"type":"audioRoute","inputs":[{"name":"x","description":"X","type":"holographic"}],"outputs":[]}"#) else {
            Issue.record("no route")
            return
        }
        #expect(route.inputs == [AudioRouteNotice.Port(name: "x", description: "X", type: .unknown)])
    }
}

/// A dock in another process that takes a client's command and never answers it.
@Suite struct UnansweredCommandTests {
    @Test(.onTestThreads) func aCommandTheDockNeverAnswersIsAnsweredUnknownAfterFiveSeconds() throws {
        let path = try Fixtures.temporaryFolder().appendingPathComponent("mute.sock").path
        let listening = try ListeningSocket(path: path)
        let identity = AccessoryIdentity(name: "mute", identifier: UUID(), firmwareVersion: "1", hardwareModel: "mute")
        let served = Thread {
            // The listening socket does not block: wait for the dock's one client.
            var client: Int32 = -1
            waitWhile(atMost: .seconds(30), every: .milliseconds(10)) {
                client = accept(listening.fd, nil, nil)
                return client < 0
            }
            guard client >= 0 else { return }
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) & ~O_NONBLOCK)
            defer { close(client) }
            func say(_ line: String) { _ = try? Syscall.writeAll(Array((line + "\n").utf8), to: client, socketFlags: Int32(MSG_NOSIGNAL)) }
            for item in LineReader(fileDescriptor: client) {
                guard case .line(let line) = item else { continue }
                if line.contains(#""type":"hello""#) {
                    say(DockSession.helloLine(identity, capabilities: [.pan, .tilt], docked: true, trackingButtonEnabled: true,
                                              limits: .standard, dockLimits: .standard))
                    say(MotionState(time: 0, position: .zero, velocity: .zero).jsonLine)
                } else if line.contains("getLimits") {
                    say(DockSession.limitsLine(.standard, dockLimits: .standard, time: 0))
                } else if line.contains("getMotionState") {
                    say(MotionState(time: 0, position: .zero, velocity: .zero).jsonLine)
                }  // commands: never a word
            }
        }
        served.start()
        // The dock's clock is the test's: the 5 s are counted on it, not on a busy machine's.
        let now = Mutex(100.0)
        let dock = try ProtocolDock(path: path, clock: { now.withLock { $0 } })
        let answer = Mutex<DockError??>(nil)
        try dock.perform(.setAngularVelocity(DockVector(x: 0, y: 0.1, z: 0)), at: 100) { error in answer.withLock { $0 = .some(error) } }
        // The run's own commands go on; the client's, unanswered, is answered once it is overdue:
        // not 4.9 s after it was sent, and at once 5.1 s after.
        now.withLock { $0 = 104.9 }
        try dock.perform(.setAngularVelocity(.zero), at: 104.9)
        #expect(answer.withLock { $0 } == nil, "answered before its 5 s: \(String(describing: answer.withLock { $0 }))")
        now.withLock { $0 = 105.1 }
        try dock.perform(.setAngularVelocity(.zero), at: 105.1)
        let got = answer.withLock { $0 }
        guard case .some(.some(.unknown(let words))) = got else {
            Issue.record("answered \(String(describing: got))")
            return
        }
        #expect(words.contains("did not answer"), "\(words)")
        shutdown(listening.fd, Int32(SHUT_RDWR))
    }
}

/// An answer is made from its request (``DockAnswer``), the only way servers answer.
@Suite struct DockAnswerTests {
    @Test func anAnswerCarriesItsOwnRequestsIdAndNoOther() throws {
        let seven = try DockRequest(parsing: #"{"id":7,"command":"getLimits"}"#)
        let text = try DockRequest(parsing: #"{"id":"a\"b","command":"getBattery"}"#)
        let none = try DockRequest(parsing: #"{"command":"getMotionState"}"#)
        let body = DockSession.doneLine("setLimits")
        #expect(DockAnswer(to: seven, [body]).lines == [#"{"id":7,"type":"done","command":"setLimits"}"#])
        #expect(DockAnswer(to: text, [body]).lines == [#"{"id":"a\"b","type":"done","command":"setLimits"}"#])
        #expect(DockAnswer(to: none, [body, body]).lines == [body, body])
        // A line that is no request still names its request when it could be read.
        guard case .failure(let failure)? = DockRequest.parse(.line(#"{"id":9,"command":"setOrientation","duration":"soon"}"#)) else {
            Issue.record("parsed")
            return
        }
        let refused = DockAnswer(to: failure, [DockSession.errorLine(failure.error, line: 1)]).lines
        #expect(refused.count == 1 && DockReply(line: refused[0])?.id == .number(9), "\(refused)")
    }
}

/// The client's types in DockKit's shapes: what a port from DockKit writes compiles and means the same.
@Suite struct DockKitShapeTests {
    @Test func aLimitIsCheckedAsItIsMade() throws {
        let yaw = try AxisLimits(positionRange: -1.0..<1.0, maximumSpeed: 0.5)
        #expect(yaw.range == -1...1 && yaw.maximumSpeed == 0.5 && yaw.maximumAcceleration == .infinity && !yaw.isUnchanged)
        #expect(throws: DockError.invalidRequest("position range 1.0..<1.0 is empty: the minimum must be below the maximum")) {
            _ = try AxisLimits(positionRange: 1.0..<1.0, maximumSpeed: 0.5)
        }
        #expect(throws: DockError.self) { _ = try AxisLimits(positionRange: -1.0..<1.0, maximumSpeed: -0.1) }
        #expect(throws: DockError.self) { _ = try AxisLimits(positionRange: -1.0..<1.0, maximumSpeed: .infinity) }
        #expect(throws: DockError.self) { _ = try AxisLimits(positionRange: -1.0..<1.0, maximumSpeed: .nan) }
        // A limit made so is taken by a dock as its own acceleration.
        let held = try DockLimits.standard.narrowed(to: DockLimits(yaw: yaw))
        #expect(held.yaw.range == -1...1 && held.yaw.maximumAcceleration == DockLimits.standard.yaw.maximumAcceleration)
    }

    @Test func aSubjectsDockKitRectIsItsFaceWithTheOriginAtTheTop() {
        let face = UnitRect(x: 0.4, y: 0.7, width: 0.1, height: 0.2)  // lower-left origin: near the top
        let person = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.35, y: 0.1, width: 0.2, height: 0.8), faceRect: face)
        func near(_ a: UnitRect, _ b: UnitRect) -> Bool {
            abs(a.x - b.x) < 1e-12 && abs(a.y - b.y) < 1e-12 && abs(a.width - b.width) < 1e-12 && abs(a.height - b.height) < 1e-12
        }
        #expect(near(person.dockKitRect, UnitRect(x: 0.4, y: 0.1, width: 0.1, height: 0.2)), "\(person.dockKitRect)")
        var faceless = person
        faceless.faceRect = nil
        #expect(abs(faceless.dockKitRect.y - 0.1) < 1e-12 && faceless.dockKitRect.height == 0.8, "the whole person while the face is not seen")
        let object = TrackedSubject(id: UUID(), kind: .object, rect: UnitRect(x: 0, y: 0, width: 0.5, height: 0.25), faceRect: face)
        #expect(near(object.dockKitRect, UnitRect(x: 0, y: 0.75, width: 0.5, height: 0.25)), "\(object.dockKitRect)")
    }

    @Test func anObservationMadeAsDockKitsIsSure() {
        let seen = Observation(identifier: 7, type: .humanBody, rect: UnitRect(x: 0.1, y: 0.1, width: 0.2, height: 0.5))
        #expect(seen.identifier == 7 && seen.confidence == 1 && seen.faceYaw == nil)
    }
}

extension DockKitShapeTests {
    /// Any axis the dock lacks refuses limits that would move it (DockKit: the axis is not
    /// supported), tilt on a pan-only camera as roll on a stand; its own limits given back pass.
    @Test func limitsOnAnAxisTheDockLacksAreNotCapable() throws {
        let panOnly = DockLimits(pitch: AxisLimits(range: 0...0, maximumSpeed: 0, maximumAcceleration: 0),
                                 yaw: AxisLimits(range: -2...2, maximumSpeed: 1, maximumAcceleration: 4),
                                 roll: AxisLimits(range: 0...0, maximumSpeed: 0, maximumAcceleration: 0))
        #expect(throws: DockError.notCapable("pitch")) {
            _ = try panOnly.narrowed(to: DockLimits(pitch: try AxisLimits(positionRange: -0.1..<0.1, maximumSpeed: 0.5)))
        }
        #expect(throws: DockError.notCapable("roll")) {
            _ = try panOnly.narrowed(to: DockLimits(roll: try AxisLimits(positionRange: -0.1..<0.1, maximumSpeed: 0.5)))
        }
        #expect(try panOnly.narrowed(to: panOnly) == panOnly, "the dock's own limits, given back whole, pass")
        // A device's limits keep only the axes it has: a UVC camera with pan alone.
        let uvc = DockLimits.standard.withAxes(of: [.pan, .zoom])
        #expect(uvc.yaw == DockLimits.standard.yaw && uvc.pitch == panOnly.pitch && uvc.roll == panOnly.roll, "\(uvc)")
        #expect(throws: DockError.notCapable("pitch")) {
            _ = try uvc.narrowed(to: DockLimits(pitch: try AxisLimits(positionRange: -0.1..<0.1, maximumSpeed: 0.5)))
        }
        #expect(DockAccessory.Limits(panOnly) == DockAccessory.Limits(yaw: panOnly.yaw), "a client reads the axes it lacks as nil")
        // A camera without tilt whose limits still say a tilt range (from the motor options): its
        // hello names no tilt, and the client reads pitch as nil.
        #expect(DockAccessory.Limits(DockLimits.standard, capabilities: ["pan", "zoom"]) == DockAccessory.Limits(yaw: DockLimits.standard.yaw))
        #expect(DockAccessory.Limits(DockLimits.standard, capabilities: ["pan", "tilt"]).pitch == DockLimits.standard.pitch)
    }
}
