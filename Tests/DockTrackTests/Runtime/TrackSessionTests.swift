import DockTrack
import DockTrackTestKit
import Foundation
import Synchronization
import Testing

/// `track` in process: a TrackSession on the test kit (blank frames, a scripted detector, the
/// dummy dock), exact and without launching the tool.
@Suite(.onTestThreads) struct TrackSessionTests {
    /// Blank frames at 20 a second, as a file gives them.
    struct BlankClip: FrameSource {
        let count: Int
        var next = 0
        var info: MediaInfo { MediaInfo(name: "blank", kind: .video, size: ImageSize(width: 64, height: 48), framesPerSecond: 20, frameCount: count) }

        mutating func nextFrame() throws(FrameSourceError) -> Frame? {
            guard next < count else { return nil }
            defer { next += 1 }
            do { return try Frame.blank(index: next, time: Double(next) / 20) } catch { throw .unreadable(path: "blank", reason: "\(error)") }
        }
    }

    static let right = Observation(type: .humanFace, rect: UnitRect(x: 0.75, y: 0.5, width: 0.1, height: 0.15), confidence: 0.9)

    static func session(frames: Int, states: String? = nil) throws -> TrackSession {
        var params = TrackingPipeline.Params()
        params.detectEvery = 1
        let pipeline = TrackingPipeline(detector: ScriptedDetector(always: [right]), cues: nil, params: params, identifiers: .sequential)
        let loop = try FrameLoop(controller: FramingController(params: FramingController.Params()), dock: AnyDock(DummyDock()), cameraOnDock: false)
        return TrackSession(source: BlankClip(count: frames), pipeline: pipeline, loop: loop, selection: FrameSelection(),
                            liveRun: nil, liveDock: false, clockOrigin: 0,
                            outputs: TrackSession.Outputs(states: try states.map { try LineOutput(path: $0) }))
    }

    static func commands(_ session: TrackSession) -> [TimedDockCommand] { (session.loop.dock.base as! DummyDock).commands }

    @Test func aClipIsTrackedFramedWrittenAndEndsWithTheDockStill() throws {
        let states = try Fixtures.temporaryFolder().appendingPathComponent("states.jsonl").path
        let session = try Self.session(frames: 40, states: states)
        var told: [Int] = []
        let summary = try session.run(stopping: { false }, onFrame: { told.append($0) })
        #expect(summary.frames == 40 && told == Array(1...40))
        let lines = try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 40)
        #expect(lines.last?.contains(#""identifier":"00000000-0000-0000-0000-000000000001""#) == true, "\(lines.last ?? "")")
        let sent = Self.commands(session)
        #expect(sent.contains { ($0.command.velocity?.y ?? 0) > 0.05 }, "the dock turned toward the face on the right")
        #expect(sent.last?.command == .setAngularVelocity(.zero) && sent.last?.time == 39.0 / 20, "\(String(describing: sent.last))")
    }

    @Test func aStopAskedForEndsTheRunWithTheDockStill() throws {
        let session = try Self.session(frames: 400)
        var frames = 0
        let summary = try session.run(stopping: { frames >= 10 }, onFrame: { frames = $0 })
        #expect(summary.frames >= 10 && summary.frames < 20, "\(summary.frames)")
        #expect(Self.commands(session).last?.command == .setAngularVelocity(.zero))
    }
}

/// `track` opened from a plain configuration value, as the command line and any other program
/// make it: the real detector over a real clip, the command stream collected in process.
@Suite(.onTestThreads) struct TrackConfigurationTests {
    /// The command stream's lines, decoded.
    final class CommandStream: Sendable {
        private let lines = Mutex<[String]>([])
        var write: @Sendable (String) throws -> Void { { line in self.lines.withLock { $0.append(line) } } }
        var commands: [TimedDockCommand] {
            lines.withLock { $0 }.compactMap { try? JSONDecoder().decode(TimedDockCommand.self, from: Data($0.utf8)) }
        }
    }

    static func configuration(_ input: TrackConfiguration.Input, states: String) -> TrackConfiguration {
        var configuration = TrackConfiguration(input: input)
        configuration.perception.models = Fixtures.models
        configuration.perception.sequentialIdentifiers = true
        configuration.outputs.states = states
        return configuration
    }

    @Test func aConfigurationOpensTracksTheClipAndLeavesTheDockStill() throws {
        let states = try Fixtures.temporaryFolder().appendingPathComponent("states.jsonl").path
        var configuration = Self.configuration(.file(Fixtures.sample("vtest.avi")), states: states)
        configuration.frames = FrameSelection(start: 0, end: 40)
        let stream = CommandStream()
        let session = try TrackSession(opening: configuration, notes: { _ in }, commands: stream.write)
        let summary = try session.run(stopping: { false })
        #expect(summary.frames == 40)
        let lines = try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 40)
        // vtest.avi's walkers are people from the first detections on.
        #expect(lines.suffix(10).allSatisfy { $0.contains(#""kind":"person""#) }, "\(lines.last ?? "")")
        let commands = stream.commands
        #expect(commands.count == 41, "a command per frame, then the stop")
        #expect(commands.last?.command == .setAngularVelocity(.zero) && commands.last?.time == 39.0 / 10)
    }

    @Test func observationsAreNotOpenedAsPictures() throws {
        let configuration = Self.configuration(.observations("-"), states: "/dev/null")
        #expect(throws: TrackSetupError.self) { _ = try TrackSession(opening: configuration, notes: { _ in }) }
    }

    @Test func customTrackingFromAConfigurationTurnsTowardTheFaceAndStops() throws {
        let face = Observation(type: .humanFace, rect: UnitRect(x: 0.8, y: 0.45, width: 0.1, height: 0.15), confidence: 0.9)
        let file = try Fixtures.observationsFile([face], count: 30)
        let states = file.deletingLastPathComponent().appendingPathComponent("states.jsonl").path
        let stream = CommandStream()
        let notes = Mutex<[String]>([])
        try CustomTrackingRun.run(Self.configuration(.observations(file.path), states: states),
                                  notes: { note in notes.withLock { $0.append(note) } }, commands: stream.write, stopping: { false })
        let commands = stream.commands
        #expect(commands.count == 31)
        #expect(commands.contains { ($0.command.velocity?.y ?? 0) > 0.05 }, "the dock turned toward the face on the right")
        #expect(commands.last?.command == .setAngularVelocity(.zero) && commands.last?.time == 29.0 / 20)
        #expect(try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n").count == 30)
        #expect(notes.withLock { $0 }.isEmpty, "20 observations a second are within DockKit's rate")
    }
}
