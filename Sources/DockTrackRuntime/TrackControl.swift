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

    struct Waiting: AnsweredRequest {
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
    struct State {
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
        /// Whether the run watches for gestures (then its hello says `gestures`).
        var gestures = false

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
    let clock: @Sendable () -> Double
    /// The wall clock each frame's states are dated by (DockKit's tracking state time and
    /// motion state timestamp are wall times; the lines' `time` is the run's own clock).
    let wallClock: @Sendable () -> Date

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
    let state: Mutex<State>
    /// Lines kept for the client at most: a client slow to read loses the oldest tracking
    /// states, never an answer.
    package let maximumPending = 256

    /// The limits the run started with (the dock's, or narrower ones the user gave): what a
    /// client's setLimits is checked against, as docksim checks against its hardware's.
    let startingLimits: DockLimits
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
        // Its wall time is the run's start, as every later state says its own (DockKit's timestamp).
        state = Mutex(State(motion: MotionState(time: 0, position: home, velocity: .zero, date: wallClock()), limits: limits,
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

}
