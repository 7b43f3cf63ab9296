import DockTrackAudio
import DockTrackClient
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackTracking
import Foundation
import Synchronization
import DockTrackSystem

/// The frame loop's side: the requests that came since the last frame, applied before it.
extension TrackControl {
    // MARK: The frame loop's side

    /// What the requests that came since the last frame change, at `time` on the loop's clock,
    /// in a loop whose settings are `settings`: system tracking on or off (off stops the dock),
    /// framing mode, region and limits, motion commands for the dock, a client's own observations
    /// tracked on `customTracking` (the caller's, kept from frame to frame: a pipeline without a
    /// detector). Selection is made on the pipeline's ranker at once. `dockPosition` is where the
    /// dock points at `time`, asked only for a relative move. The run merges what is returned
    /// (``FrameLoop/merge(_:at:)``); each request is answered when it is done.
    package func changes(to settings: LoopSettings, dockPosition: () throws -> DockOrientation,
                         pipeline: TrackingPipeline, customTracking: TrackingPipeline, at time: Double) -> ControlChanges {
        let requests = state.withLock { state in
            defer { state.waiting = [] }
            state.appliedAt = time
            return state.waiting
        }
        var changes = ControlChanges(settings: settings)
        for request in requests {
            // Answered when it is done: at once, or (a motion command) when the dock has answered it.
            let answered: @Sendable (Result<[String], DockError>) -> Void = { [weak self] result in
                var answers: [String]
                switch result {
                // Only a request with an id is answered once done; an error always is.
                case .success(let lines): answers = request.id == nil ? [] : lines
                case .failure(let error): answers = [DockSession.errorLine(error, line: request.line)]
                }
                self?.answer(DockAnswer(to: request, answers).lines, to: request.client)
            }
            do {
                if let lines = try change(&changes, by: request.change, dockPosition: dockPosition, pipeline: pipeline,
                                          customTracking: customTracking, at: time, later: answered) {
                    answered(.success(lines))
                }
            } catch let error as DockError {
                answered(.failure(error))
            } catch {
                answered(.failure(.invalidRequest("\(error)")))
            }
        }
        // A client's velocity that was not renewed in time stops (once).
        let now = clock()
        let lapsed = state.withLock { state in
            guard let given = state.velocityGivenAt, now - given > Self.velocityRenewal else { return false }
            state.velocityGivenAt = nil
            return true
        }
        if lapsed && !changes.settings.systemTracking {
            changes.dockOrders.append(DockOrder(command: .setAngularVelocity(.zero), answered: { _ in }))
        }
        return changes
    }

    /// `{"type":"selected","identifier":…}`.
    static func selectedLine(_ id: UUID) -> String {
        var line = JSONLine()
        line.add("type", "selected")
        line.add("identifier", id.uuidString)
        return line.text
    }

    /// Adds `change` to `changes`: its answer lines when it is done at once (`later` is not
    /// called then). A command to the dock has `later` called when the dock has answered it and
    /// returns `nil`.
    func change(_ changes: inout ControlChanges, by change: Change, dockPosition: () throws -> DockOrientation,
                        pipeline: TrackingPipeline, customTracking: TrackingPipeline, at time: Double,
                        later: @escaping @Sendable (Result<[String], DockError>) -> Void) throws -> [String]? {
        switch change {
        case .systemTracking(let on):
            changes.settings.systemTracking = on
            changes.settings.customSubjects = nil
            state.withLock { $0.custom = nil }
            // The run's own camera frames again.
            if on, let camera = state.withLock({ state in defer { state.trackerCamera = nil }; return state.trackerCamera }) {
                changes.settings.params.camera = camera
            }
            if !on { changes.dockOrders.append(DockOrder(command: .setAngularVelocity(.zero), answered: { _ in })) }
            return []
        case .tracking(.setFramingMode(let mode)):
            changes.settings.params.mode = mode
            return []
        case .tracking(.setRegionOfInterest(let upperLeft)):
            changes.settings.params.regionOfInterest = UnitRect(upperLeftOrigin: upperLeft)
            return []
        case .tracking(.selectSubjects(let identifiers)):
            changes.choseInDockPicture = true
            try pipeline.selectSubjects(identifiers)
            return [DockSession.doneLine("selectSubjects")]
        case .tracking(.track(let observations, let camera)):
            return try self.change(&changes, by: .observations(observations, camera: camera, framed: true), dockPosition: dockPosition,
                                   pipeline: pipeline, customTracking: customTracking, at: time, later: later)
        case .observations(let observations, let camera, let framed):
            // The caller's observations, tracked on a pipeline of their own and framed by the
            // loop through the caller's camera (the run's own until one is given).
            let runCamera = changes.settings.params.camera
            let trackerCamera = state.withLock { state in
                if camera != nil && state.trackerCamera == nil { state.trackerCamera = runCamera }
                return state.trackerCamera
            }
            if let camera, let trackerCamera {
                changes.settings.params.camera = try camera.cameraModel(aspectOf: trackerCamera)
            }
            // Observations made in a turned picture (a phone held in portrait), turned upright.
            let upright = try camera.map { camera throws(DockError) in try observations.map(camera.upright) } ?? observations
            let subjects = try customTracking.process(observations: upright, at: time)
            state.withLock { $0.custom = (subjects, time) }
            // Out of rate (the first of a stream, too slow): tracked, not framed; the dock goes
            // on framing the last in-rate ones while they are fresh, then stops.
            if framed { changes.settings.customSubjects = (subjects, time) }
            return []
        case .tracking(.selectSubject(let x, let y)):
            changes.choseInDockPicture = true
            return [Self.selectedLine(try pipeline.selectSubject(atX: x, y: y))]
        case .tracking(.selectOverviewSubject(let x, let y)):
            // The run's overview chooses (``FrameLoop/merge(_:at:)`` leaves it to the session).
            changes.overviewSelections.append(OverviewSelection(x: x, y: y) { chosen in
                later(chosen.map { [Self.selectedLine($0)] })
            })
            return nil
        case .command(let command):
            // A roll the dock cannot make is refused here, as the dock itself refuses it (the
            // tracker's own commands have no roll, and would drop it).
            if dockLimits.roll.maximumSpeed == 0 {
                if case .setOrientation(let o, _, _) = command, o.z != 0 { throw DockError.notCapable("roll") }
                if case .setAngularVelocity(let v) = command, v.z != 0 { throw DockError.notCapable("roll") }
            }
            // Limits are checked before anything is sent: every number finite, none negative,
            // none past the run's own (the tracker commands up to the limits in force, so a limit
            // past the dock's would have it command speeds the dock cannot make). The axes left
            // out keep the limits set before (the run's or a client's; never a zoom's narrowing).
            let held = try command.limits.map { asked throws(DockError) in
                try startingLimits.narrowed(to: asked, keeping: state.withLock { $0.limits })
            }
            // A move to an orientation goes to one absolute target, decided here from where the
            // dock points now (by its reports) and within the limits, and said in the answer: the
            // dock behind and the client's progress then agree on it (a relative move resolved by
            // each at its own moment would end where neither expects).
            var sent = held.map { .setLimits($0) } ?? command
            var target: DockOrientation?
            if case .setOrientation(let orientation, let duration, let relative) = command {
                let from = relative ? try dockPosition() : .zero
                target = state.withLock { $0.limits }.clamp(from + orientation)
                sent = .setOrientation(target!, duration: duration, relative: false)
            }
            // Answered once the dock behind has answered this command (a dock in another process
            // answers later; its refusal of one command never lands on another).
            let done = held.map { [DockSession.limitsLine($0, dockLimits: dockLimits, time: time), DockSession.doneLine(command.name)] }
                ?? [DockSession.doneLine(command.name, movingAt: time, target: target)]
            changes.dockOrders.append(DockOrder(command: sent) { refusal in later(refusal.map { .failure($0) } ?? .success(done)) })
            if let held {
                changes.settings.params.limits = held
                changes.clientLimits = held
                state.withLock { $0.limits = held }
            }
            return nil
        }
    }
}
