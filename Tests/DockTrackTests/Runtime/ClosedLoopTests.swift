import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// The closed loop with a camera that moves with the dock: the camera sees the world from the
/// pose the dock reports (in this process, in docksim over a socket, a VISCA camera), so a
/// controller that does not know where the dock pointed at capture never frames anyone.
/// Serialized: the loops on the real clock run one at a time, not all at once beside the rest
/// of the suite on two cores.
@Suite(.serialized, .serializedOnTestThreads) struct ClosedLoopTests {
    static let camera = CameraModel.webcam
    /// The tilt that puts a face at the framing height with the dock level.
    static let faceLevel = camera.angles(toward: 0.5, 0.6).x

    /// How a still person was framed: the first time after which they stayed within 2% of the
    /// view's width of the framing target, the final distance, and the most they went past it.
    struct StillOutcome: CustomStringConvertible {
        var settledAt: Double
        var finalError: Double
        var overshoot: Double
        var description: String { String(format: "settled at %.2f s, final error %.4f, overshoot %.4f of the view's width", settledAt, finalError, overshoot) }
    }

    static func judge(_ samples: [FramingSimulation.Sample], person: UUID, targetX: Double) -> StillOutcome {
        let xs = samples.map { ($0.time, $0.seen[person]?.x) }
        let startX = xs.first { $0.1 != nil }?.1 ?? 0.5
        let side = startX > targetX ? 1.0 : -1.0
        let lastOutside = xs.last { $0.1.map { abs($0 - targetX) > 0.02 } ?? true }
        let overshoot = xs.compactMap { $0.1 }.map { (targetX - $0) * side }.max() ?? 0
        return StillOutcome(settledAt: lastOutside.map { $0.0 + 1 / 30 } ?? 0, finalError: abs((xs.last?.1 ?? .nan) - targetX),
                            overshoot: max(0, overshoot))
    }

    static func params(_ mode: FramingMode, _ commands: DockCommandKind, limits: DockLimits = .standard) -> FramingController.Params {
        var params = FramingController.Params()
        params.mode = mode
        params.commands = commands
        params.camera = camera
        params.limits = limits
        return params
    }

    static func target(_ mode: FramingMode) -> Double { mode == .left ? 1.0 / 3 : mode == .right ? 2.0 / 3 : 0.5 }

    static let still = FramingSimulation.Person { _ in DockOrientation(x: faceLevel, y: 0.3, z: 0) }
    /// Walks across in front of the dock: from 0.5 rad left to 0.5 rad right in 6 s.
    static let walker = FramingSimulation.Person { t in DockOrientation(x: faceLevel, y: -0.5 + min(max(t - 0.5, 0), 6) / 6, z: 0) }

    static func inZone(_ samples: [FramingSimulation.Sample], person: UUID, mode: FramingMode) -> Double {
        let zone = samples.filter { s in s.seen[person].map { isInTargetZone($0, target: (target(mode), 0.6)) } ?? false }
        return Double(zone.count) / Double(samples.count)
    }

    static let cases: [(FramingMode, DockCommandKind)] = [FramingMode.center, .left, .right].flatMap { m in DockCommandKind.allCases.map { (m, $0) } }

    @Test(arguments: cases)
    func theSimulatorFramesAStillPerson(mode: FramingMode, commands: DockCommandKind) {
        var simulation = FramingSimulation(controller: FramingController(params: Self.params(mode, commands)))
        let outcome = Self.judge(simulation.run(people: [Self.still], duration: 4), person: Self.still.id, targetX: Self.target(mode))
        #expect(outcome.settledAt <= 2 && outcome.overshoot <= 0.05, "\(mode) \(commands): \(outcome)")
    }

    @Test(arguments: DockCommandKind.allCases)
    func theSimulatorKeepsAWalkerInTheZone(commands: DockCommandKind) {
        var simulation = FramingSimulation(controller: FramingController(params: Self.params(.center, commands)))
        let share = Self.inZone(simulation.run(people: [Self.walker], duration: 7), person: Self.walker.id, mode: .center)
        #expect(share >= 0.9, "\(commands): in the zone on \(share) of frames")
    }

    /// docksim in another process, over its socket on the real clock.
    static func withDocksim<T>(_ body: (ProtocolDock) throws -> T) throws -> T {
        let docksim = try DocksimProcess()
        defer { withExtendedLifetime(docksim) {} }  // alive to the end, not to its last use
        let dock = try ProtocolDock(path: docksim.socket, clock: MonotonicClock.now)
        return try withExtendedLifetime(docksim) { try body(dock) }
    }

    @Test(arguments: cases)
    func docksimInAnotherProcessFramesAStillPerson(mode: FramingMode, commands: DockCommandKind) throws {
        let outcome = try Self.withDocksim { dock in
            var simulation = FramingSimulation(controller: FramingController(params: Self.params(mode, commands)), dock: dock)
            return Self.judge(try simulation.runLive(people: [Self.still], duration: 3.5, clock: MonotonicClock.now),
                              person: Self.still.id, targetX: Self.target(mode))
        }
        #expect(outcome.settledAt <= 2 && outcome.overshoot <= 0.05, "\(mode) \(commands): \(outcome)")
    }

    @Test(arguments: DockCommandKind.allCases)
    func docksimInAnotherProcessKeepsAWalkerInTheZone(commands: DockCommandKind) throws {
        let (share, latency) = try Self.withDocksim { dock in
            var simulation = FramingSimulation(controller: FramingController(params: Self.params(.center, commands)), dock: dock)
            let samples = try simulation.runLive(people: [Self.walker], duration: 7, clock: MonotonicClock.now)
            return (Self.inZone(samples, person: Self.walker.id, mode: .center), dock.commandLatency)
        }
        #expect(share >= 0.9, "\(commands): in the zone on \(share) of frames")
        #expect(latency < 0.2, "docksim answers within its poll: \(latency) s measured")
    }

    /// A VISCA camera with motors that answer 60 ms after each command.
    static func withVISCACamera<T>(_ body: (DeviceDock, FakeVISCACamera) throws -> T) throws -> T {
        var limits = DockLimits.standard
        limits.yaw.maximumSpeed = VISCA.Units().maximumPanSpeed
        limits.pitch.maximumSpeed = VISCA.Units().maximumTiltSpeed
        let camera = try FakeVISCACamera(motors: limits, latency: 0.06)
        defer { camera.stop() }
        let dock = DeviceDock(hardware: VISCADock(transport: try VISCAOverUDP(host: "127.0.0.1", port: camera.port)), limits: limits,
                              clock: MonotonicClock.now)
        return try body(dock, camera)
    }

    @Test(arguments: cases)
    func aVISCACameraFramesAStillPerson(mode: FramingMode, commands: DockCommandKind) throws {
        let outcome = try Self.withVISCACamera { dock, _ in
            var simulation = FramingSimulation(controller: FramingController(params: Self.params(mode, commands)), dock: dock)
            return Self.judge(try simulation.runLive(people: [Self.still], duration: 3.5, clock: MonotonicClock.now),
                              person: Self.still.id, targetX: Self.target(mode))
        }
        #expect(outcome.settledAt <= 2 && outcome.overshoot <= 0.05, "\(mode) \(commands): \(outcome)")
    }

    @Test(arguments: DockCommandKind.allCases)
    func aVISCACameraKeepsAWalkerInTheZoneAndItsLatencyIsMeasured(commands: DockCommandKind) throws {
        let (share, samples) = try Self.withVISCACamera { dock, _ in
            var simulation = FramingSimulation(controller: FramingController(params: Self.params(.center, commands)), dock: dock)
            let samples = try simulation.runLive(people: [Self.walker], duration: 7, clock: MonotonicClock.now)
            return (Self.inZone(samples, person: Self.walker.id, mode: .center), dock.latencySamples)
        }
        #expect(share >= 0.9, "\(commands): in the zone on \(share) of frames")
        let latency = Statistics.percentile(samples, 0.5)
        #expect(!samples.isEmpty && latency > 0.015 && latency < 0.15, "the camera's 60 ms (polled every 20 ms): measured \(samples)")
    }

    /// A UVC pan/tilt camera (the fake V4L2 device, whose absolute pan and tilt move at once):
    /// absolute moves, the position read back through PAN/TILT_ABSOLUTE.
    @Test func aUVCCameraFramesAStillPersonWithOrientationCommands() throws {
        let device = FakeCameraDevice.ptz(controls: [.panAbsolute: -648000...648000, .tiltAbsolute: -324000...324000])
        let dock = DeviceDock(hardware: try UVCDock(device: device), clock: MonotonicClock.now)
        var simulation = FramingSimulation(controller: FramingController(params: Self.params(.center, .orientation)), dock: dock)
        let outcome = Self.judge(try simulation.runLive(people: [Self.still], duration: 2.5, clock: MonotonicClock.now),
                                 person: Self.still.id, targetX: 0.5)
        #expect(outcome.settledAt <= 2 && outcome.overshoot <= 0.05, "\(outcome)")
        #expect(abs((device.controlValues[UVCControl.panAbsolute.rawValue] ?? 0) - 61875) < 1500, "0.3 rad is 61875 arc-seconds: \(device.controlValues)")
    }
}
