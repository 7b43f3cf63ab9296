import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// The frame loop on the test kit: scripted perception and a dummy dock, no models, no media.
@Suite(.onTestThreads) struct FrameLoopTests {
    /// What a camera pointing at `pose` sees of a still person whose face is at `direction`:
    /// one ranked subject, or nobody when the face is out of the picture.
    static func person(at direction: DockOrientation, seenFrom pose: DockOrientation,
                       camera: CameraModel = .webcam, id: UUID = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!) -> [TrackedSubject] {
        let p = camera.point(at: direction - pose)
        guard p.x > 0, p.x < 1, p.y > 0, p.y < 1 else { return [] }
        let face = UnitRect(x: p.x - 0.05, y: p.y - 0.08, width: 0.1, height: 0.16)
        return [TrackedSubject(id: id, kind: .person, rect: face, faceRect: face, saliencyRank: 1)]
    }

    @Test func aCameraOnTheDockIsTurnedUntilThePersonIsWhereTheFramingWantsThem() throws {
        var params = FramingController.Params()
        params.mode = .center
        let faceLevel = params.camera.angles(toward: 0.5, 0.6).x
        let person = DockOrientation(x: faceLevel, y: 0.3, z: 0)
        var loop = try FrameLoop(controller: FramingController(params: params), dock: DummyDock(), cameraOnDock: true, latency: 0.05)
        var last: FrameStep?
        for k in 0...150 {
            last = try loop.step(capturedAt: Double(k) / 30) { pose in Self.person(at: person, seenFrom: pose) }
        }
        let step = try #require(last)
        #expect(abs(step.atCapture.position.y - 0.3) < 0.02, "the dock points at the person: yaw \(step.atCapture.position.y)")
        let aim = try #require(step.aim)
        #expect(abs(aim.subject.x - 0.5) < 0.03, "the person is in the middle of the picture: x \(aim.subject.x)")
        #expect(loop.dock.commands.count == 151, "one command per frame")
        #expect(step.state == .tracking)
    }

    /// A network camera on the dock whose pictures arrive 0.6 s after they were taken, 15 a
    /// second, a still person to the side. Taken as seen from where the dock points on arrival,
    /// the velocity loop swings past the person and back; with the delay measured
    /// (``PictureDelay``), it comes to rest on them. Pictures that arrive as they are taken
    /// are measured as such, and pictures 1.2 and 2.4 s late are measured too.
    @Test(arguments: [(0.6, false), (0.6, true), (0, true), (1.2, true), (2.4, true)])
    func picturesThatArriveLateAreFramedFromWhereTheDockWasWhenTaken(taken: Double, measured: Bool) throws {
        let person = DockOrientation(x: FramingController.Params().camera.angles(toward: 0.5, 0.6).x, y: 0.35, z: 0)
        let history = PoseHistory()
        var loop = try FrameLoop(controller: FramingController(), dock: RememberingDock(history: history), cameraOnDock: true)
        if measured { loop.pictureDelay = PictureDelay() }
        var yaws: [(time: Double, yaw: Double)] = []
        for k in 0..<(15 * 30) {
            let arrival = Double(k) / 15
            let step = try loop.step(capturedAt: arrival) { _ in Self.person(at: person, seenFrom: history.pose(at: arrival - taken)) }
            yaws.append((arrival, step.atCommand.position.y))
        }
        let lastFive = yaws.filter { $0.time >= 25 }.map(\.yaw)
        let swing = (lastFive.max() ?? 0) - (lastFive.min() ?? 0), error = abs((lastFive.last ?? 0) - person.y)
        print(String(format: "pictures %.1f s late, delay %@: swing %.4f rad, off by %.4f rad over the last 5 s; delay in force %@",
                     taken, measured ? "measured" : "not taken", swing, error, loop.pictureDelay.map { String($0.seconds) } ?? "none"))
        if measured {
            let delay = try #require(loop.pictureDelay?.seconds)
            #expect(abs(delay - taken) <= 0.1, "the delay measured: \(delay) s")
            #expect(swing < 0.01 && error < 0.03, "at rest on the person: swing \(swing) rad, off by \(error) rad over the last 5 s")
        } else {
            // The test's own check that the scene needs the delay: without it, the dock swings.
            #expect(swing > 0.1, "swings when the delay is not taken: \(swing) rad over the last 5 s")
        }
    }

    @Test func aRecordedCameraIsSeenFromHomeWhereverTheDockTurns() throws {
        var loop = try FrameLoop(controller: FramingController(), dock: DummyDock(), cameraOnDock: false)
        var poses: [DockOrientation] = []
        for k in 0..<60 {
            _ = try loop.step(capturedAt: Double(k) / 30) { pose in
                poses.append(pose)
                return Self.person(at: DockOrientation(x: 0, y: 0.3, z: 0), seenFrom: pose)
            }
        }
        #expect(poses.allSatisfy { $0 == .zero }, "perception always sees from the home pose")
        #expect(loop.dock.position.y > 0.05, "the dock itself turned toward the person: \(loop.dock.position.y)")
    }

    @Test func aRefusedCommandIsInItsStepAndTheLoopGoesOn() throws {
        var dock = DummyDock()
        dock.refuseNext = .rateTooHigh(limit: 2)
        var loop = try FrameLoop(controller: FramingController(), dock: dock, cameraOnDock: true)
        let first = try loop.step(capturedAt: 0) { _ in [] }
        let second = try loop.step(capturedAt: 0.1) { _ in [] }
        #expect(first.refusal == .rateTooHigh(limit: 2))
        #expect(second.refusal == nil)
        #expect(loop.dock.commands.count == 1)
    }

    @Test func aPerceptionFailureEndsTheLoopWithThatError() throws {
        struct Blind: Error {}
        var loop = try FrameLoop(controller: FramingController(), dock: DummyDock(), cameraOnDock: true)
        #expect(throws: Blind.self) { try loop.step(capturedAt: 0) { _ in throw Blind() } }
        #expect(loop.dock.commands.isEmpty, "no command for a frame nobody saw")
    }

    @Test func theCommandStreamSaysWhatTheModelDid() throws {
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        let dock = CommandStreamDock(model: SimulatedDock()) { lines.all.append($0) }
        var loop = try FrameLoop(controller: FramingController(), dock: dock, cameraOnDock: false)
        for k in 0..<30 {
            _ = try loop.step(capturedAt: Double(k) / 10) { pose in Self.person(at: DockOrientation(x: 0, y: 0.2, z: 0), seenFrom: pose) }
        }
        #expect(lines.all.count == 30)
        let commands = try lines.all.map { try JSONDecoder().decode(TimedDockCommand.self, from: Data($0.utf8)) }
        #expect(commands.map(\.time) == (0..<30).map { Double($0) / 10 })
        guard case .setAngularVelocity(let v) = commands[5].command else { Issue.record("not a velocity"); return }
        #expect(v.y > 0, "pans right, toward the person")
        #expect(loop.dock.model.position.y > 0.05, "the model followed the commands")
    }

    @Test func theStepTraceHasOneLinePerFrameAfterItsHeader() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("frameloop-trace-\(UUID()).tsv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var loop = try FrameLoop(controller: FramingController(), dock: SimulatedDock(), cameraOnDock: true,
                                 trace: try LineOutput(path: path))
        for k in 0..<5 { _ = try loop.step(capturedAt: Double(k) / 30) { _ in [] } }
        let text = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(text.count == 6)
        #expect(text.first.map(String.init) == ControlTrace.header)
        #expect(text.last?.hasSuffix("\tholding") == true || text.last?.hasSuffix("\treturningHome") == true)
    }
}

/// Where a dock pointed over time, for a camera in the test to look from a past pose.
private final class PoseHistory: @unchecked Sendable {
    private var states: [MotionState] = []
    func record(_ state: MotionState) { if state.time > (states.last?.time ?? -.infinity) { states.append(state) } }
    /// The pose at `time`: interpolated between two recorded states; the first before them.
    func pose(at time: Double) -> DockOrientation {
        guard let after = states.firstIndex(where: { $0.time >= time }) else { return states.last?.position ?? .zero }
        guard after > 0 else { return states[0].position }
        let a = states[after - 1], b = states[after], share = (time - a.time) / (b.time - a.time)
        return a.position + (b.position - a.position) * share
    }
}

/// A simulated dock that says where it pointed in the past too, as a device's reported motion does.
private struct RememberingDock: Dock {
    var inner = SimulatedDock()
    let history: PoseHistory

    var latest = -Double.infinity

    mutating func motion(at time: Double) throws -> MotionState {
        guard time >= latest else { return MotionState(time: time, position: history.pose(at: time), velocity: .zero) }
        latest = time
        let state = try inner.motion(at: time)
        history.record(state)
        return state
    }
    mutating func perform(_ command: DockCommand, at time: Double) throws { try inner.perform(command, at: time) }
}
