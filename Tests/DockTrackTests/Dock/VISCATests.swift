import CV4L2
import DockTrack
import DockTrackTestKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif


@Suite(.onTestThreads) struct VISCATests {
    let units = VISCA.Units()

    @Test func packetsAreTheDocumentedBytes() {
        // Pan right at full speed, tilt up at half: 81 01 06 01 18 0A 02 01 FF.
        let drive = VISCA.drive(AngularVelocity(x: -units.maximumTiltSpeed / 2, y: units.maximumPanSpeed, z: 0), units: units)
        #expect(drive == [0x81, 0x01, 0x06, 0x01, 0x18, 0x0A, 0x02, 0x01, 0xFF])
        #expect(VISCA.drive(.zero, units: units) == [0x81, 0x01, 0x06, 0x01, 0x01, 0x01, 0x03, 0x03, 0xFF])
        // 10 degrees right (144 = 0x0090), 5 degrees down (tilt -72 = 0xFFB8): absolute position.
        let position = VISCA.position(DockOrientation(x: 5 * .pi / 180, y: 10 * .pi / 180, z: 0), relative: false, units: units)
        #expect(position == [0x81, 0x01, 0x06, 0x02, 0x18, 0x14, 0x0, 0x0, 0x9, 0x0, 0xF, 0xF, 0xB, 0x8, 0xFF])
        #expect(VISCA.positionInquiry() == [0x81, 0x09, 0x06, 0x12, 0xFF])
        #expect(VISCA.value(ofNibbles: [0xF, 0xF, 0xB, 0x8]) == -72)
        #expect(VISCA.Reply([0x90, 0x41, 0xFF]) == .acknowledged(socket: 1))
        #expect(VISCA.Reply([0x90, 0x60, 0x02, 0xFF])?.dockError == .invalidRequest("VISCA syntax error"))
        #expect(VISCA.Reply([0x12, 0x34]) == nil)
    }

    @Test func aCameraOverUDPFollowsTheDockCommands() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        let dock = VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port), units: units)
        try dock.apply(.setOrientation(DockOrientation(x: 0.1, y: -0.3, z: 0), duration: 1, relative: false), at: 0)
        let state = try dock.motionState(at: 0.1)
        #expect(abs(state.position.y + 0.3) < 0.002 && abs(state.position.x - 0.1) < 0.002, "\(state.position)")
        try dock.apply(.setAngularVelocity(AngularVelocity(x: 0, y: 0.5, z: 0)), at: 0.2)
        #expect(camera.packets.last == VISCA.drive(AngularVelocity(x: 0, y: 0.5, z: 0), units: units))
        #expect(throws: DockError.rateTooHigh(limit: 2)) {
            try dock.apply(.setOrientation(.zero, duration: 1, relative: false), at: 0.3)
            try dock.apply(.setOrientation(.zero, duration: 1, relative: false), at: 0.4)
        }
        #expect(throws: DockError.notCapable("animations")) { try dock.apply(.animate(.yes), at: 2) }
        #expect(throws: DockError.notCapable("roll")) { try dock.apply(.setAngularVelocity(AngularVelocity(z: 0.1)), at: 2) }
    }

    /// Limits a client sets reach the device as clamped commands: a VISCA camera limited to
    /// +-0.3 rad of pan is never sent a position past it, nor a speed past the limit's.
    @Test func limitsSetOnADeviceDockAreWhatTheCameraIsSent() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        let clock = ManualClock(at: 0)
        let dock = DeviceDock(hardware: VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port), units: units),
                              clock: clock.reading)
        var limits = DockLimits.standard
        limits.yaw = AxisLimits(range: -0.3...0.3, maximumSpeed: 0.5, maximumAcceleration: 4)
        try dock.perform(.setLimits(limits), at: 0)
        try dock.perform(.setOrientation(DockOrientation(x: 0, y: 1.5, z: 0), duration: 1, relative: false), at: 0)
        // What the camera received (its thread may still be at it when the reply is read).
        func received(_ count: Int) -> [[UInt8]] {
            waitWhile(atMost: .seconds(5), every: .milliseconds(2)) { camera.packets.count < count }
            return camera.packets
        }
        let limit = 0.3 * 180 / .pi * units.panPerDegree
        #expect(received(1).count == 1)
        #expect(abs(Double(camera.position.pan) - limit) <= 1, "pan sent \(camera.position.pan) units, the limit is \(limit)")
        clock.advance(by: 1)
        try dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 3, z: 0)), at: 1)
        #expect(received(2).last == VISCA.drive(AngularVelocity(x: 0, y: 0.5, z: 0), units: units), "the speed limit reaches the camera")
        #expect(throws: DockError.self) { try dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: .nan, z: 0)), at: 1.1) }
        // A stop after it: the camera's next packet is the stop (the refused request sent
        // nothing before it), decided by the order packets come in, not by a wait.
        try dock.perform(.setAngularVelocity(.zero), at: 1.2)
        #expect(received(3).count == 3 && camera.packets.last == VISCA.drive(.zero, units: units),
                "a refused request is not sent: \(camera.packets)")
    }

    /// A session driving a VISCA camera says what the camera has: pan and tilt, no battery,
    /// buttons or animations; asking for those is `notCapable`.
    @Test func aSessionOnAVISCACameraClaimsOnlyWhatTheCameraHas() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        var session = DockSession(identity: AccessoryIdentity(name: "ptz", identifier: UUID(), firmwareVersion: "1", hardwareModel: "visca"))
        session.hardware = VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port), units: units)
        let hello = session.handle(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#, at: 0)
        let object = (try? JSONSerialization.jsonObject(with: Data((hello.first ?? "").utf8))) as? [String: Any]
        #expect(object?["capabilities"] as? [String] == ["pan", "tilt", "systemTracking"], "\(hello)")
        for line in [#"{"command":"getBattery"}"#, #"{"command":"animate","animation":"yes"}"#] {
            let answer = session.handle(line, at: 0.1)
            #expect(answer.count == 1 && answer[0].contains(#""code":"notCapable""#), "\(line): \(answer)")
        }
        #expect(DockSession(identity: session.identity).capabilities.contains(.battery), "the simulated dock has its battery")
    }

    @Test func aSilentCameraIsNotConnected() throws {
        // A UDP port nobody answers on.
        let camera = try FakeVISCACamera()
        camera.stop()
        let dock = VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port), units: units)
        #expect(throws: DockError.self) { try dock.apply(.setAngularVelocity(.zero), at: 0) }
    }

    /// A transport on a manual clock: each wait takes the time it is given unless a packet of
    /// `chatter` is there first (every 0.05 s).
    final class ScriptedTransport: VISCATransport {
        let clock: ManualClock
        var chatter: [UInt8]?
        var waits: [Double] = []
        init(clock: ManualClock, chatter: [UInt8]? = nil) { self.clock = clock; self.chatter = chatter }
        func send(_ packet: [UInt8]) throws(DockError) {}
        func receive(timeout: Double) throws(DockError) -> [UInt8]? {
            waits.append(timeout)
            if let chatter, timeout > 0.05 { clock.advance(by: 0.05); return chatter }
            clock.advance(by: timeout)
            return nil
        }
    }

    @Test func aCameraThatStopsAnsweringCostsATenthOfASecondACommandAndASecondAgainOnceItAnswers() throws {
        let clock = ManualClock(at: 0)
        let silent = ScriptedTransport(clock: clock)
        let dock = VISCADock(transport: silent, units: units, clock: clock.reading)
        var spent: [Double] = []
        for i in 0..<5 {
            let before = clock.now()
            #expect(throws: DockError.notConnected) { try dock.apply(.setAngularVelocity(.zero), at: Double(i)) }
            spent.append(clock.now() - before)
        }
        #expect(abs(spent[0] - 1) < 1e-9 && spent.dropFirst().allSatisfy { abs($0 - 0.1) < 1e-9 }, "\(spent)")
        // It answers again: the next exchange gets a whole second once more.
        silent.chatter = [0x90, 0x41, 0xFF]
        try dock.apply(.setAngularVelocity(.zero), at: 6)
        silent.chatter = nil
        let before = clock.now()
        #expect(throws: DockError.notConnected) { try dock.apply(.setAngularVelocity(.zero), at: 7) }
        #expect(abs(clock.now() - before - 1) < 1e-9)
    }

    @Test func packetsThatAreNotTheReplyDoNotHoldTheWaitPastItsDeadline() throws {
        let clock = ManualClock(at: 0)
        // A completion without a position payload, forever: never the inquiry's answer.
        let chatty = ScriptedTransport(clock: clock, chatter: [0x90, 0x50, 0xFF])
        let dock = VISCADock(transport: chatty, units: units, clock: clock.reading)
        #expect(throws: DockError.notConnected) { _ = try dock.motionState(at: 0) }
        #expect(clock.now() <= 1.0 + 1e-9 && chatty.waits.count < 25, "waited \(clock.now()) s, \(chatty.waits.count) packets")
    }
}


@Suite(.onTestThreads) struct VISCASerialTests {
    @Test func aCameraOnASerialLineGetsTheBytesAndAnswers() throws {
        let camera = try FakeSerialCamera()
        defer { camera.stop() }
        let dock = VISCADock(transport: try VISCAOverSerial(path: camera.devicePath))
        try dock.apply(.setAngularVelocity(AngularVelocity(x: 0, y: -0.2, z: 0)), at: 0)
        let state = try dock.motionState(at: 0.1)
        // The fake camera reports pan 144 (10 degrees right) and tilt -72 (5 degrees down).
        #expect(abs(state.position.y - 10 * .pi / 180) < 1e-9 && abs(state.position.x - 5 * .pi / 180) < 1e-9)
        #expect(camera.packets.first == VISCA.drive(AngularVelocity(x: 0, y: -0.2, z: 0), units: VISCA.Units()))
        #expect(camera.packets.last == VISCA.positionInquiry())
    }
}

/// docksim as a bridge: the dock protocol on one side, a real (here: fake) VISCA camera on the other.
@Suite(.onTestThreads) struct BackendBridgeTests {
    @Test func docksimDrivesAVISCACameraBehindTheDockProtocol() throws {
        let camera = try FakeVISCACamera()
        defer { camera.stop() }
        let run = try DockSimTests().pipe([
            #"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#,
            #"{"time":0.5,"command":"setOrientation","orientation":{"x":0.0,"y":0.2,"z":0.0},"duration":1}"#,
            #"{"time":0.6,"command":"setAngularVelocity","velocity":{"x":0.0,"y":-0.3,"z":0.0}}"#,
            #"{"time":0.7,"command":"animate","animation":"yes"}"#,
            #"{"time":0.8,"command":"getMotionState"}"#,
        ], arguments: ["--backend", "visca-udp:127.0.0.1:\(camera.port)"])
        let units = VISCA.Units()
        #expect(camera.packets.contains(VISCA.position(DockOrientation(x: 0, y: 0.2, z: 0), relative: false, units: units)))
        #expect(camera.packets.contains(VISCA.drive(AngularVelocity(x: 0, y: -0.3, z: 0), units: units)))
        // The camera cannot animate: the dock says so, and the session goes on.
        let error = try #require(run.replies.first { $0["type"] as? String == "error" })
        #expect(error["code"] as? String == "notCapable" && error["line"] as? Int == 4)
        // Motion states report the camera's own position (the fake keeps the last absolute one).
        let state = try #require(run.replies.first { $0["type"] as? String == "motionState" && $0["time"] as? Double == 0.8 })
        #expect(abs((state["position"] as! [String: Double])["y"]! - 0.2) < 0.002)
    }

    @Test func aBadBackendIsOneLineAndAFailure() throws {
        let run = try ToolRun.run(DockSimTests.docksim, ["--backend", "uvc:/dev/video-none"])
        #expect(run.status == 1)
        #expect(run.stderr == "docksim: --backend uvc:/dev/video-none: not connected to a dock\n")
    }
}
