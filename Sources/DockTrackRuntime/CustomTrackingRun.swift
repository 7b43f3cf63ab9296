import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking
import Foundation

/// `track --observations`: the caller's observations (`detect`'s JSON lines) tracked, ranked
/// and framed instead of a detector's (DockKit's custom tracking). A line that is not an
/// observation is reported and skipped; observations outside 10 to 30 a second are reported.
/// The dock is left still at the end, however the input ends.
package enum CustomTrackingRun {
    /// Reads the observations of `configuration`'s input to their end (or until `stopping`),
    /// driving its dock.
    package static func run(_ configuration: TrackConfiguration, notes: @escaping @Sendable (String) -> Void,
                           commands: (@Sendable (String) throws -> Void)?,
                           stopping: @escaping @Sendable () -> Bool) throws {
        guard case .observations(let path) = configuration.input else {
            throw TrackSetupError("custom tracking reads observations, not \(configuration.input)")
        }
        let file: FileHandle
        if path == "-" {
            file = .standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw FrameSourceError.fileNotFound(path: path) }
            file = handle
        }
        defer { withExtendedLifetime(file) {} }
        let identifiers: IdentifierSource = configuration.perception.sequentialIdentifiers ? .sequential : .random
        let pipeline = TrackingPipeline(detector: nil, cues: nil, identifiers: identifiers)
        let customTracking = TrackingPipeline(detector: nil, cues: nil)
        let statesOutput = try configuration.outputs.states.map { try LineOutput(path: $0) }
        var rate = ObservationRateMonitor()
        var driver: RunDriver<FramingController, AnyDock>?
        var server: TrackControlServer?
        let live = configuration.dock.address.isLive
        let origin = MonotonicClock.now()
        let dockClock: @Sendable () -> Double = { MonotonicClock.now() - origin }
        var lineNumber = 0
        // However the input ends (an error included), the dock is left still: a live dock is
        // sent a stop and given time to take it; on the command stream the last line is a stop.
        // Then the control server stops.
        defer { driver?.end() }
        for item in LineReader(fileDescriptor: file.fileDescriptor, stopped: stopping) {
            lineNumber += 1
            guard case .line(let line) = item else {
                notes("observations line \(lineNumber): longer than \(LineFramer.defaultMaximumLineLength) bytes; skipped")
                continue
            }
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let record: DetectionRecord
            do {
                record = try JSONDecoder().decode(DetectionRecord.self, from: Data(line.utf8))
            } catch {
                notes("observations line \(lineNumber): not an observation line (\(JSONDecoding.describe(error)))")
                continue
            }
            // Out of DockKit's rate (and the first line, which has nothing to be judged against)
            // the observations are tracked and reported, not framed: at one a second a command
            // held for a whole second overshot and the next turned back harder (0.64, -1.26,
            // 1.96 rad/s).
            var inRate = false
            do {
                inRate = try rate.record(at: record.time)
            } catch {
                notes("observations line \(lineNumber) at time \(record.time): \(error); not framed")
            }
            if driver == nil {
                let params = configuration.framingParams(for: record.size)
                let loop = try configuration.frameLoop(params, liveInput: false, clock: dockClock, commands: commands)
                driver = RunDriver(loop: loop, dockClock: live ? dockClock : nil)
                server = try configuration.outputs.serve.map { path throws in
                    try TrackControlServer.serving(path, framing: loop.controller.params, dockLimits: loop.dock.reportedLimits, notes: notes)
                }
                if let server { driver!.own("control server") { server.stop() } }
            }
            driver!.loop.dock.relayNews(to: server?.control, notes: notes)
            if let control = server?.control {
                let changes = control.changes(for: &driver!.loop, pipeline: pipeline, customTracking: customTracking, at: record.time)
                driver!.loop.merge(changes, at: record.time)
            }
            // A client of --serve may have switched system tracking off; out of rate it is off for this line.
            let systemTracking = driver!.loop.systemTracking
            driver!.loop.systemTracking = systemTracking && inRate
            let step = try driver!.step(recordedAt: record.time) { _, _ in
                try pipeline.process(observations: record.observations, at: record.time)
            }
            driver!.loop.systemTracking = systemTracking
            if systemTracking && !inRate {
                // Each line still gets its command: a stop.
                try? driver!.loop.dock.perform(.setAngularVelocity(.zero), at: live ? dockClock() : record.time)
            }
            let tracked = SubjectStatesRecord(frame: record.frame, time: record.time, subjects: step.subjects)
            server?.control.publish(tracked, motion: step.atCommand)
            try statesOutput?.write(tracked.jsonLine)
            if stopping() { break }
        }
    }
}
