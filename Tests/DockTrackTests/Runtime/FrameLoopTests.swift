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
