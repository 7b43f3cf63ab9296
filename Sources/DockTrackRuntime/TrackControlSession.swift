import DockTrackAudio
import DockTrackClient
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackTracking
import Foundation
import Synchronization
import DockTrackSystem

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
        let gestures: [DockCapability] = control.watchesGestures ? [.gestures] : []
        return DockSession.helloLine(identity, capabilities: Self.axes(of: control.dockLimits) + Self.capabilities + gestures + dock.capabilities,
                                     docked: dock.docked,
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
