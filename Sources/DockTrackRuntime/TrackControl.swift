import DockTrackAudio
import DockTrackClient
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackTracking
import Foundation
import Synchronization
import DockTrackSystem

/// What the client of `docktrack track --serve` asks of the running tracker, and what the
/// tracker tells it: shared by the server's thread (``TrackControlSession``) and the frame loop
/// (``changes(to:dockPosition:pipeline:customTracking:at:)`` before each frame, ``publish(_:motion:)`` after), behind a Mutex.
///
/// Requests take effect at the next frame, in the order they came. Those that can only be
/// answered there (a motion command, `selectSubject`, `setLimits`) are answered then, with
/// their request's id.
package final class TrackControl: Sendable {
    /// A request waiting for the next frame.
    enum Change {
        case systemTracking(Bool)
        case tracking(TrackingRequest)
        /// Custom tracking's observations, framed only when they came in rate.
        case observations([Observation], camera: CameraInformation?, framed: Bool)
        case command(DockCommand)
    }

    private struct Waiting: AnsweredRequest {
        var change: Change
        var id: RequestID?
        /// The request's line number in the session, for its error.
        var line: Int
        /// Whose request it is: its answers go to that client alone.
        var client: Client?
    }

    /// A client of the control path (a `--serve` session, a control page): tracking states and
    /// the dock's news go to every client, the answers to a request to the client that sent it.
    package struct Client: Hashable, Sendable {
        let number: Int
    }

    /// What the server and the frame loop share.
    private struct State {
        var waiting: [Waiting] = []
        /// Lines waiting for each client.
        var outboxes: [Client: [Outgoing]] = [:]
        var nextClient = 0
        /// System tracking as last asked (the loop follows at its next frame), and the client that
        /// switched it off: when that client goes, it is turned back on.
        var systemTracking = true
        var trackingOffBy: Client?
        var motion: MotionState
        var limits: DockLimits
        /// The framing as last set (by the run's options, then by a client).
        var framingMode: FramingMode
        /// Origin at the upper-left, as the getter answers it.
        var regionOfInterest: UnitRect
        /// The dock behind the tracker, as it last said.
        var dock = RelayedDock()
        /// Custom tracking's latest subjects and when: the tracking states report them while
        /// they are fresh, instead of the tracker's own.
        var custom: (subjects: [TrackedSubject], time: Double)?
        /// The loop's time at the last ``changes(to:dockPosition:pipeline:customTracking:at:)``.
        var appliedAt = -Double.infinity
        /// The run's own camera model while a custom-tracking client's camera frames.
        var trackerCamera: CameraModel?
        /// The run's speed and latency, for a page.
        var meter = RunMeter()
        /// When a client's velocity (not a stop) was last given, on ``TrackControl/clock``:
        /// it lapses ``TrackControl/velocityRenewal`` seconds later unless given again.
        var velocityGivenAt: Double?
        /// What clients changed, each with what was there before: given back when the client
        /// that changed it last goes.
        var claims = Claims()
        /// The audio route now, as a `getAudioRoute` answer (a run that follows PipeWire's).
        var audioRouteLine: String?

        /// `line` for every client.
        mutating func broadcast(_ line: String) {
            broadcast(Outgoing(line: line))
        }

        /// `outgoing` for every client.
        mutating func broadcast(_ outgoing: Outgoing) {
            for client in outboxes.keys { outboxes[client]!.append(outgoing) }
        }
    }
    /// A setting a client changed: who changed it last, and what the run had before any client did.
    struct Claim<Value> {
        var owner: Client
        var before: Value

        /// `owner`'s claim on a setting now `current`: the value before stays the first claim's.
        static func by(_ owner: Client, over claim: Claim?, current: Value) -> Claim {
            Claim(owner: owner, before: claim?.before ?? current)
        }
    }

    /// The settings a client may change and must give back: system tracking is given back
    /// through ``State/trackingOffBy``.
    struct Claims {
        var framingMode: Claim<FramingMode>?
        var regionOfInterest: Claim<UnitRect>?
        var limits: Claim<DockLimits>?
        /// Who chose the subjects (`selectSubject`, `selectSubjects`); ranking is automatic before.
        var selection: Claim<[UUID]>?
    }

    /// A line waiting for a client, and whether it is a tracking state (of which a client that
    /// falls behind loses the oldest; answers and news it never loses).
    struct Outgoing {
        var line: String
        var isTrackingState = false
    }

    /// Custom subjects are reported and framed while they are this fresh (seconds).
    static let customFreshness = 0.5
    /// A client's velocity not renewed within this long (seconds) is stopped, as the dock
    /// protocol says and docksim does: a client gone quiet mid-joystick (a frozen page, a stuck
    /// program, a connection left open) would otherwise turn the dock for as long as the run
    /// lasts, since the frame loop's own queries keep the dock behind it from ever falling silent.
    package static let velocityRenewal = 1.0
    /// The clock velocities are renewed on (a client's time, not the frames': a file read at
    /// full speed runs many frames a second of real time).
    private let clock: @Sendable () -> Double
    /// The wall clock each frame's states are dated by (DockKit's tracking state time and
    /// motion state timestamp are wall times; the lines' `time` is the run's own clock).
    private let wallClock: @Sendable () -> Date

    /// What the dock behind the tracker said of itself (a dock in another process: docksim, a
    /// bridge), for the hello and the getters; a dock that says nothing is docked, its tracking
    /// button enabled, without a battery.
    struct RelayedDock {
        var docked = true
        var trackingButtonEnabled = true
        /// What the dock can do that a client of the tracker may use or hear of.
        var capabilities: [DockCapability] = []
        /// The latest state line of each battery, by name, in the order first heard.
        var batteries: [(name: String, line: String)] = []
    }
    private let state: Mutex<State>
    /// Lines kept for the client at most: a client slow to read loses the oldest tracking
    /// states, never an answer.
    package let maximumPending = 256

    /// The limits the run started with (the dock's, or narrower ones the user gave): what a
    /// client's setLimits is checked against, as docksim checks against its hardware's.
    private let startingLimits: DockLimits
    /// The dock's own limits, as it says them (its hardware's); the run's when it says none.
    let dockLimits: DockLimits

    /// Before the first frame: the dock at rest at `home` with `limits`, framing in `mode`
    /// within `regionOfInterest` (the controller's: origin at the lower-left); `dockLimits`: the
    /// dock's own, when it says them.
    package init(limits: DockLimits, home: DockOrientation, mode: FramingMode = .automatic,
                regionOfInterest: UnitRect = UnitRect(x: 0, y: 0, width: 1, height: 1), dockLimits: DockLimits? = nil,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now,
                wallClock: @escaping @Sendable () -> Date = Date.init) {
        startingLimits = limits
        self.dockLimits = dockLimits ?? limits
        self.clock = clock
        self.wallClock = wallClock
        state = Mutex(State(motion: MotionState(time: 0, position: home, velocity: .zero), limits: limits,
                            framingMode: mode, regionOfInterest: regionOfInterest.upperLeftOrigin))
    }

    // MARK: The server's side

    func enqueue(_ change: Change, id: RequestID?, line: Int, from client: Client? = nil) {
        state.withLock { state in
            state.waiting.append(Waiting(change: change, id: id, line: line, client: client))
            // The getters answer what was last set, as DockKit's properties do.
            switch change {
            case .systemTracking(let on):
                // Every client hears of it (two pages show the same), the asker too.
                if state.systemTracking != on { state.broadcast(TrackerSetting.systemTracking(on).jsonLine) }
                state.systemTracking = on
                state.trackingOffBy = on ? nil : client
            case .tracking(.setFramingMode(let mode)):
                if let client { state.claims.framingMode = .by(client, over: state.claims.framingMode, current: state.framingMode) }
                state.framingMode = mode
            case .tracking(.setRegionOfInterest(let upperLeft)):
                if let client {
                    state.claims.regionOfInterest = .by(client, over: state.claims.regionOfInterest, current: state.regionOfInterest)
                }
                state.regionOfInterest = upperLeft
            case .command(.setLimits):
                if let client { state.claims.limits = .by(client, over: state.claims.limits, current: state.limits) }
            case .tracking(.selectSubject), .tracking(.selectSubjects), .tracking(.selectOverviewSubject):
                if let client { state.claims.selection = .by(client, over: state.claims.selection, current: []) }
            default: break
            }
            switch change {
            case .command(.setAngularVelocity(let velocity)): state.velocityGivenAt = velocity == .zero ? nil : clock()
            case .command(.setOrientation), .command(.animate), .systemTracking: state.velocityGivenAt = nil
            default: break
            }
        }
    }

    /// The framing mode and region of interest as last set.
    var framingModeLine: String { TrackerSetting.framingMode(state.withLock { $0.framingMode }).jsonLine }
    var regionOfInterestLine: String { TrackerSetting.regionOfInterest(upperLeft: state.withLock { $0.regionOfInterest }).jsonLine }

    /// System tracking as last asked, by any client.
    var systemTracking: Bool { state.withLock { $0.systemTracking } }

    /// A new client: from now on it gets the tracking states, the dock's news and the answers
    /// to its requests (``takePending(for:)``).
    package func subscribe() -> Client {
        state.withLock { state in
            let client = Client(number: state.nextClient)
            state.nextClient += 1
            state.outboxes[client] = []
            return client
        }
    }

    /// The client went; its lines are dropped, and what it changed is given back at the next
    /// frame, as the run had it before any client changed it: system tracking (back on when
    /// this client switched it off; custom tracking ends with it), framing mode, region of
    /// interest, limits (the dock's too), the subjects chosen (ranking automatic again). A
    /// setting another client changed after it stays that client's. Returns what was given back.
    @discardableResult
    package func unsubscribe(_ client: Client) -> [String] {
        state.withLock { state in
            state.outboxes[client] = nil
            var givenBack: [(String, Change)] = []
            if state.trackingOffBy == client, !state.systemTracking {
                state.systemTracking = true
                state.trackingOffBy = nil
                state.broadcast(TrackerSetting.systemTracking(true).jsonLine)
                givenBack.append(("system tracking back on", .systemTracking(true)))
            }
            if let claim = state.claims.framingMode, claim.owner == client {
                state.claims.framingMode = nil
                state.framingMode = claim.before
                givenBack.append(("framing mode back to \(claim.before.rawValue)", .tracking(.setFramingMode(claim.before))))
            }
            if let claim = state.claims.regionOfInterest, claim.owner == client {
                state.claims.regionOfInterest = nil
                state.regionOfInterest = claim.before
                givenBack.append(("region of interest back", .tracking(.setRegionOfInterest(upperLeft: claim.before))))
            }
            if let claim = state.claims.limits, claim.owner == client {
                state.claims.limits = nil
                // What a client reads from now on; the dock is told at the next frame.
                state.limits = claim.before
                givenBack.append(("limits back", .command(.setLimits(claim.before))))
            }
            if let claim = state.claims.selection, claim.owner == client {
                state.claims.selection = nil
                givenBack.append(("subjects chosen back", .tracking(.selectSubjects(claim.before))))
            }
            for (_, change) in givenBack { state.waiting.append(Waiting(change: change, id: nil, line: 0, client: nil)) }
            return givenBack.map(\.0)
        }
    }

    /// The lines that came up for `client` since the last call.
    package func takePending(for client: Client) -> [String] {
        state.withLock { state in
            defer { if state.outboxes[client] != nil { state.outboxes[client] = [] } }
            return (state.outboxes[client] ?? []).map(\.line)
        }
    }

    /// The dock behind the tracker as it last said.
    var relayedDock: RelayedDock { state.withLock { $0.dock } }

    /// The dock's motion as of the last frame, as a motion-state line.
    package var motionStateLine: String { motionLine }

    /// The run's speed and latency now (``RunMeter/jsonLine(at:)``).
    package var runSpeedLine: String {
        let now = MonotonicClock.now()
        return state.withLock { $0.meter.jsonLine(at: now) }
    }

    /// A frame was done `latency` seconds after its capture (a file: after it entered the tracker).
    package func recordFrame(latency: Double) {
        let now = MonotonicClock.now()
        state.withLock { $0.meter.record(latency: latency, at: now) }
    }

    /// The dock's motion as of the last frame.
    var motionLine: String { state.withLock { $0.motion.jsonLine } }
    var limitsLine: String { state.withLock { DockSession.limitsLine($0.limits, dockLimits: dockLimits, time: $0.motion.time) } }
    var limits: DockLimits { state.withLock { $0.limits } }

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
    private func change(_ changes: inout ControlChanges, by change: Change, dockPosition: () throws -> DockOrientation,
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

    /// What the dock behind the tracker said of itself since the last call (``DockNews``) goes
    /// to the client as the dock sent it, and is what the hello and `getBattery` say from then
    /// on; `accessory`: the dock's latest hello (what it can do).
    package func relay(_ news: [DockNews], accessory: DockAccessory) {
        // Of the dock's capabilities, those a client of the tracker meets: its battery, its
        // buttons' events, animations it plays when told (the motors are the tracker's own).
        let relayed = [DockCapability.battery, .buttons, .animations].filter { accessory.capabilities.contains($0.rawValue) }
        state.withLock { state in
            state.dock.capabilities = relayed
            for item in news {
                switch item.message {
                case .dockEvent(let event) where event == "docked" || event == "undocked":
                    state.dock.docked = event == "docked"
                case .trackingButton(let enabled):
                    state.dock.trackingButtonEnabled = enabled
                case .battery(let battery):
                    if let i = state.dock.batteries.firstIndex(where: { $0.name == battery.name }) {
                        state.dock.batteries[i].line = item.line
                    } else {
                        state.dock.batteries.append((battery.name, item.line))
                    }
                default: break
                }
                state.broadcast(item.line)
            }
        }
    }

    /// A change of the audio route goes to every client, and the route now is what
    /// `getAudioRoute` answers from then on.
    package func relay(audioRouteChange change: AudioSessionRouteChange) {
        state.withLock { state in
            state.audioRouteLine = change.current.audioRouteLine
            state.broadcast(change.jsonLine)
        }
    }

    /// The audio route as the run starts to follow it: what `getAudioRoute` answers.
    package func relay(audioRoute route: AudioSessionRoute) {
        state.withLock { $0.audioRouteLine = route.audioRouteLine }
    }

    /// The audio route as last heard, as a `getAudioRoute` answer; `nil` while no route is followed.
    var audioRouteLine: String? { state.withLock { $0.audioRouteLine } }

    /// After a frame: its subjects go to the client as a tracking state, and the dock's
    /// motion is what queries read until the next frame.
    /// While custom tracking's subjects are fresh, the tracking state reports them (what the
    /// dock frames) instead of the frame's own.
    package func publish(_ record: SubjectStatesRecord, motion: MotionState) {
        let maximumPending = self.maximumPending
        let now = wallClock()
        state.withLock { state in
            // What the client reads is what a dock within its limits can do (the loop's motion is
            // a prediction past the dock's last report).
            state.motion = state.limits.bounding(motion)
            state.motion.date = now
            guard !state.outboxes.isEmpty else { return }
            var record = record
            record.date = now
            if let custom = state.custom, state.appliedAt - custom.time <= Self.customFreshness { record.subjects = custom.subjects }
            state.broadcast(Outgoing(line: record.trackingStateLine, isTrackingState: true))
            // A client too far behind loses its oldest tracking states (answers stay).
            for client in state.outboxes.keys {
                while state.outboxes[client]!.count > maximumPending,
                      let old = state.outboxes[client]!.firstIndex(where: \.isTrackingState) {
                    state.outboxes[client]!.remove(at: old)
                }
            }
        }
    }

    /// Answers go to the client whose request it was (nobody's: the run's own change).
    private func answer(_ lines: [String], to client: Client?) {
        guard !lines.isEmpty, let client else { return }
        state.withLock { state in
            if state.outboxes[client] != nil { state.outboxes[client]! += lines.map { Outgoing(line: $0) } }
        }
    }
}

/// The dock protocol as `docktrack track --serve` speaks it (``DockEndpoint``): DockKit's
/// system-tracking calls (`setSystemTracking`, ``TrackingRequest``), motion commands while
/// system tracking is off, limits, queries, and a tracking state for every frame.
///
/// - `hello` → the hello (capabilities: ``capabilities``), then the motion state;
/// - `setSystemTracking`, `setFramingMode`, `setRegionOfInterest`: answered `done` at once
///   (with an id), in effect from the next frame;
/// - `selectSubjects`: at the next frame, `done` (with an id), or `noSubjectFound` when an
///   identifier is none of the last frame's subjects;
/// - `getSystemTracking`, `getFramingMode`, `getRegionOfInterest`: what was last set (by the
///   run's options, then by a client), as ``TrackerSetting`` lines;
/// - `selectSubject`: `{"type":"selected","identifier":…}` or `noSubjectFound`, at the next frame;
/// - `track` (custom observations): refused while system tracking is on; refused with
///   `rateTooHigh` above 30 a second and `rateTooLow` below 10 (more than 0.25 s after the one
///   before), and not taken; the first of a stream (the first of all, or after a pause of more than 2 s) is tracked, not framed; the controller frames the
///   rest while they are fresh (half a second), through the request's camera; the tracking
///   states report the custom subjects meanwhile;
/// - `setAngularVelocity`, `setOrientation`, `animate`: refused with `invalidRequest` while
///   system tracking is on (as DockKit: the app turns it off first), else done by the dock at
///   the next frame and answered then (`done`, or the dock's error);
/// - `setLimits`: at the next frame, answered with the limits in force;
/// - what the dock behind says of itself (a dock in another process: ``TrackControl/relay(_:accessory:)``):
///   its `undocked`/`docked` and tracking-button events, accessory events and battery states
///   are relayed as it sent them; the hello says docked, the tracking button and the dock's
///   battery, buttons and animations as it last did; `getBattery` answers its batteries' last
///   states; motion commands while it is undocked are refused with `invalidated`;
/// - `{"type":"trackingState","frame":…,"time":…,"subjects":[…]}` for every frame, to the client
///   holding the session; motion states on the server's interval.
/// The client that switched system tracking off hanging up turns it back on. Several clients may
/// use the same ``TrackControl`` at once (this session and a control page): each gets the
/// tracking states and the answers to its own requests.
package struct TrackControlSession: DockEndpoint, Sendable {
    package let control: TrackControl
    package let identity: AccessoryIdentity
    /// What the tracker itself offers; the axes are the dock's (``axes(of:)``).
    package static let capabilities: [DockCapability] = [.systemTracking, .framing, .trackingStates]

    /// The axes a dock with `limits` turns about: pan, tilt and roll where it can move.
    package static func axes(of limits: DockLimits) -> [DockCapability] {
        [(DockAxis.yaw, DockCapability.pan), (.pitch, .tilt), (.roll, .roll)].compactMap { axis, capability in
            let range = limits[axis].range
            return limits[axis].maximumSpeed == 0 && range.lowerBound == range.upperBound ? nil : capability
        }
    }
    package private(set) var hasSession = false
    package var isDocked: Bool { true }
    /// System tracking as last asked, by this client or another (the loop follows at its next frame).
    package var systemTracking: Bool { control.systemTracking }
    /// This session's client of the control path, while it has one.
    private var client: TrackControl.Client?
    private var lineNumber = 0
    /// Custom observations come 10 to 30 times a second (DockKit's rates).
    private var observationRate = ObservationRateMonitor()

    package init(control: TrackControl, identity: AccessoryIdentity) {
        self.control = control
        self.identity = identity
    }

    package mutating func handle(_ parsed: Result<DockRequest, DockRequest.Failure>?, at time: Double) -> [String] {
        lineNumber += 1
        switch parsed {
        case nil:
            return []
        case .failure(let failure)?:
            return DockAnswer(to: failure, [DockSession.errorLine(failure.error, line: lineNumber)]).lines
        case .success(let request)?:
            return DockAnswer(to: request, answer(request, at: time)).lines
        }
    }

    private mutating func answer(_ request: DockRequest, at time: Double) -> [String] {
        func error(_ e: DockError) -> [String] { [DockSession.errorLine(e, line: lineNumber)] }
        let done = { (name: String) in request.id == nil ? [] : [DockSession.doneLine(name)] }
        if case .hello(let offered) = request.kind, !offered.contains(DockSession.protocolName) {
            return error(.notSupported("protocols \(offered); this dock speaks \(DockSession.protocolName)"))
        }
        if !hasSession {
            hasSession = true
            client = control.subscribe()
        }
        switch request.kind {
        case .hello:
            return [hello, control.motionLine]
        case .query("getMotionState"):
            return [control.motionLine]
        case .query("getLimits"):
            return [control.limitsLine]
        case .query("getBattery"):
            let batteries = control.relayedDock.batteries.map(\.line)
            return batteries.isEmpty ? error(.notCapable("battery: the dock behind the tracker has reported none")) : batteries
        case .query("getSystemTracking"):
            return [TrackerSetting.systemTracking(systemTracking).jsonLine]
        case .query("getFramingMode"):
            return [control.framingModeLine]
        case .query("getRegionOfInterest"):
            return [control.regionOfInterestLine]
        case .query("getAudioRoute"):
            return control.audioRouteLine.map { [$0] } ?? error(.notSupported("audio route: this run follows no audio graph (PipeWire)"))
        case .query:
            return [hello]
        case .tracking(let tracking) where tracking.name == "track":
            guard !systemTracking else {
                return error(.invalidRequest("track (custom observations) while system tracking is on; turn it off first (setSystemTracking false)"))
            }
            guard case .track(let observations, let camera) = tracking else { return [] }
            // Out of DockKit's rate (10 to 30 a second), refused and not taken: at one a second
            // every call after the first is. The first of all is taken and tracked, not framed.
            let inRate: Bool
            do { inRate = try observationRate.record(at: time) } catch let e { return error(e) }
            control.enqueue(.observations(observations, camera: camera, framed: inRate), id: nil, line: lineNumber, from: client)
            return done("track")
        case .tracking(let tracking):
            control.enqueue(.tracking(tracking), id: request.id, line: lineNumber, from: client)
            // Answered at the next frame, once the subjects are known: the subject chosen, or
            // whether the identifiers are subjects at all.
            if case .selectSubject = tracking { return [] }
            if case .selectSubjects = tracking { return [] }
            if case .selectOverviewSubject = tracking { return [] }
            return done(tracking.name)
        case .command(.setSystemTracking(let on)):
            control.enqueue(.systemTracking(on), id: nil, line: lineNumber, from: client)
            return done("setSystemTracking")
        case .command(let command):
            if case .setLimits = command {} else if systemTracking {
                return error(.invalidRequest("\(command.name) while system tracking is on; turn it off first (setSystemTracking false)"))
            }
            // The dock takes no command while the phone is off it (it says docked again).
            guard control.relayedDock.docked else { return error(.invalidated) }
            control.enqueue(.command(command), id: request.id, line: lineNumber, from: client)
            return []
        }
    }

    /// The tracker's capabilities and the dock's that reach a client; docked and the tracking
    /// button as the dock last said.
    private var hello: String {
        let dock = control.relayedDock
        return DockSession.helloLine(identity, capabilities: Self.axes(of: control.dockLimits) + Self.capabilities + dock.capabilities, docked: dock.docked,
                                     trackingButtonEnabled: dock.trackingButtonEnabled, limits: control.limits,
                                     dockLimits: control.dockLimits)
    }

    package func advance(to time: Double) -> [String] { [] }
    package func motionStateLine() -> String { control.motionLine }
    package mutating func pendingLines() -> [String] { client.map(control.takePending(for:)) ?? [] }

    package mutating func sessionEnded(at time: Double) -> String {
        hasSession = false
        defer { client = nil }
        guard let client else { return "session closed" }
        let givenBack = control.unsubscribe(client)
        return givenBack.isEmpty ? "session closed" : "session closed; \(givenBack.joined(separator: ", "))"
    }

    package func writeTrace(to trace: OutputFile?) throws(OutputFile.CannotWrite) {}
}

/// ``TrackControlSession`` served on a Unix socket from a thread of its own while the frame
/// loop runs: `docktrack track --serve PATH`.
package final class TrackControlServer: Sendable {
    package let control: TrackControl
    private let stopping: StopRequest
    private let serving: OwnedThread

    /// Binds `path` at once (a path in use is an error here, before any frame) and serves it
    /// until ``stop()``; `log` gets the server's lines (clients dropped, sessions closed).
    package init(path: String, control: TrackControl, identity: AccessoryIdentity,
                log: @escaping @Sendable (String) -> Void) throws(SocketError) {
        self.control = control
        let listening = try ListeningSocket(path: path)
        let session = TrackControlSession(control: control, identity: identity)
        let stopping = StopRequest()
        self.stopping = stopping
        serving = OwnedThread(named: "docktrack serve") {
            var server = DockSocketServer(path: path, session: session, trace: nil, stateInterval: 0.1, duration: nil,
                                          stopped: { stopping.isRequested }, log: log)
            do { try server.serve(on: listening) } catch { log("\(error)") }
        }
    }

    /// Ends the server (its clients are closed, the socket removed) and waits for it.
    package func stop() {
        stopping.request()
        serving.join()
    }

    deinit { stop() }
}
