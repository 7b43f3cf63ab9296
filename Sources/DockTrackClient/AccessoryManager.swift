import DockTrackCore
import DockTrackSystem
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The client side of the dock protocol over a Unix socket, as DockKit's accessory manager:
/// a stream of state changes (docked, undocked) and, for the dock, streams of motion states,
/// accessory events and battery states. After an undocking it says hello again as soon as the
/// dock reports `docked` (re-registration), and the stream reports the dock docked again.
public final class DockAccessoryManager: Sendable {
    // Each property read is a stream of its own (DockKit's): two `for await` loops each get
    // every value, and a stream begins with the current state, never with old history.

    /// Docked or undocked: the dock as it is now first, then each change.
    public var stateChanges: AsyncStream<AccessoryStateChange> { stateBroadcast.stream() }
    // As DockKit's stream getters, these throw `notConnected` once the connection has ended,
    // and `notCapable` (DockKit's `notSupportedByDevice`) when the dock's hello says it has no
    // such thing to send (a reader would wait for ever). Before the hello they cannot tell,
    // and give the stream.

    /// The dock's motion: the latest state first, then each the dock sends (a reader that
    /// falls behind gets the newest).
    public var motionStates: AsyncStream<MotionState> {
        get throws(DockError) {
            try checkStreamCanFlow(needs: nil, what: "motion states")
            return motionBroadcast.stream()
        }
    }
    /// Buttons, camera controls and (from `track --serve`) gestures, from the moment of reading
    /// on; `notCapable` from a dock without buttons that recognizes no gestures.
    public var accessoryEvents: AsyncStream<AccessoryEvent> {
        get throws(DockError) {
            if !has(.gestures) { try checkStreamCanFlow(needs: .buttons, what: "accessory events (it has no buttons, nor gestures)") }
            try checkStreamCanFlow(needs: nil, what: "accessory events")
            return eventBroadcast.stream()
        }
    }
    /// Each battery's state: every battery's latest first (asked of the dock at its hello),
    /// then each change; `notCapable` from a dock without a battery.
    public var batteryStates: AsyncStream<BatteryState> {
        get throws(DockError) {
            try checkStreamCanFlow(needs: .battery, what: "battery states (it has no battery)")
            return batteryBroadcast.stream()
        }
    }
    /// Errors the dock sent without a request's id (code and message), from the moment of
    /// reading on.
    public var errors: AsyncStream<(code: String, message: String)> { errorBroadcast.stream() }
    /// The tracked subjects of every frame, ranked, from a tracker serving the protocol
    /// (`docktrack track --serve`): the latest first, then each frame's (a reader that falls
    /// behind gets the newest); `notCapable` from a dock alone (docksim), which tracks nothing.
    public var trackingStates: AsyncStream<SubjectStatesRecord> {
        get throws(DockError) {
            try checkStreamCanFlow(needs: .trackingStates, what: "tracking states (it tracks nothing itself)")
            return trackingBroadcast.stream()
        }
    }

    /// Throws `notConnected` when the connection has ended, `notCapable` when the dock's hello
    /// lacks `capability`.
    /// Whether the dock said it has `capability` in its hello.
    private func has(_ capability: DockCapability) -> Bool {
        session.withLock { $0.accessory?.capabilities.contains(capability.rawValue) ?? false }
    }

    private func checkStreamCanFlow(needs capability: DockCapability?, what: String) throws(DockError) {
        let (connected, capabilities) = session.withLock { ($0.connected && !$0.hungUp, $0.accessory?.capabilities) }
        guard connected else { throw .notConnected }
        if let capability, let capabilities, !capabilities.contains(capability.rawValue) {
            throw .notCapable("this dock sends no \(what)")
        }
    }
    /// Changes of the audio route on the tracker's machine, with their reason and the route
    /// before (AVAudioSession's route changes; `track --serve` where PipeWire runs).
    public var audioRouteChanges: AsyncStream<AudioRouteNotice> { audioRouteBroadcast.stream() }

    private let fd: Int32
    /// Lines go out whole, one at a time, from any task.
    private let writer: SocketLineWriter
    /// Reads the dock's lines until the connection ends.
    private let reader = Mutex<OwnedThread?>(nil)
    private let stateBroadcast = Broadcast<AccessoryStateChange>(buffered: 16)
    private let motionBroadcast = Broadcast<MotionState>(buffered: 1)
    private let eventBroadcast = Broadcast<AccessoryEvent>(buffered: 64)
    private let batteryBroadcast = Broadcast<BatteryState>(buffered: 16)
    private let errorBroadcast = Broadcast<(code: String, message: String)>(buffered: 64)
    private let trackingBroadcast = Broadcast<SubjectStatesRecord>(buffered: 1)
    private let audioRouteBroadcast = Broadcast<AudioRouteNotice>(buffered: 16)
    /// What the reading thread and the callers share.
    private struct Session {
        var accessory: DockAccessory?
        /// Whether the phone is on the dock, as the dock last said (its state changes say it).
        var docked = true
        /// Requests sent with an id, waiting for their answer.
        var pending: [RequestID: CheckedContinuation<DockMessage, any Error>] = [:]
        var nextID = 1
        var connected = true
        /// ``disconnect()`` was called: the connection is ending (the reading thread ends it).
        var hungUp = false
        /// The last motion state the dock sent, and the moves waiting for their end.
        var lastMotion: MotionState?
        var moves: [MotionProgress] = []
        /// Callers of ``accessory()`` waiting for the hello.
        var helloWaiters: [CheckedContinuation<DockAccessory, any Error>] = []
        /// Each battery's latest state, by name, in the order first heard.
        var batteries: [BatteryState] = []
        /// The dock refused the session: another client holds it.
        var sessionInUse = false
    }
    private let session = Mutex(Session())

    /// Connects to the dock serving `socketPath`, says hello, and waits for the answer in
    /// ``accessory()``; throws `notConnected` when nothing serves there, or when the dock does
    /// not answer within `helloTimeout` seconds (a socket that accepts and never speaks).
    public static func connect(to socketPath: String, helloTimeout: Double = 5) async throws(DockError) -> DockAccessoryManager {
        let manager = try DockAccessoryManager(socketPath: socketPath, helloTimeout: helloTimeout)
        _ = try await manager.accessory()
        return manager
    }

    /// The socket of the dock this manager is connected to.
    public let socketPath: String

    /// Connects to the dock serving `socketPath` and says hello. A dock that has not answered
    /// the hello within `helloTimeout` seconds is hung up on: the state changes end with
    /// `disconnected`, waiting requests throw `notConnected`.
    public init(socketPath: String, helloTimeout: Double = 5) throws(DockError) {
        let fd = try UnixSocket.connect(to: socketPath)
        self.socketPath = socketPath
        self.fd = fd
        writer = SocketLineWriter(fd: fd)
        let helloDeadline = MonotonicClock.now() + (helloTimeout.isFinite ? max(0, helloTimeout) : 5)
        // The thread holds the manager until the connection ends.
        reader.withLock { $0 = OwnedThread(named: "docktrack client") { [self] in readLoop(helloDeadline: helloDeadline) } }
        sayHello()
    }

    /// The dock as its hello said, waiting for the hello when it has not come yet; throws
    /// `notConnected` when the connection ends first (the dock hung up, or never answered
    /// within the hello timeout).
    public func accessory() async throws(DockError) -> DockAccessory {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DockAccessory, any Error>) in
                let known: DockAccessory?? = session.withLock { session in
                    if let accessory = session.accessory { return .some(accessory) }
                    guard session.connected else { return .some(nil) }
                    session.helloWaiters.append(continuation)
                    return .none
                }
                switch known {
                case .some(.some(let accessory)): continuation.resume(returning: accessory)
                case .some(.none): continuation.resume(throwing: DockError.notConnected)
                case .none: break
                }
            }
        } catch let error as DockError {
            throw error
        } catch {
            throw .notConnected
        }
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        reader.withLock { $0?.join() }
        close(fd)
    }

    /// The dock, once it has answered the hello.
    public var current: DockAccessory? { session.withLock { $0.accessory } }

    /// Whether the dock refused the session because another client holds it (``DockError/sessionInUse``).
    public var sessionInUse: Bool { session.withLock { $0.sessionInUse } }

    /// Sends a command (or a query: `getBattery`, `getMotionState`...) to the dock, without
    /// waiting: the dock's refusal, if any, arrives on ``errors``.
    public func send(_ command: DockCommand, at time: Double = 0) {
        write(command.jsonLine(time: time))
    }

    /// Sends a query by name.
    public func query(_ name: String) {
        write(#"{"command":"\#(name)"}"#)
    }

    /// Sends `command` with an id of its own and waits for the dock's answer to it: returns when
    /// the dock took it; throws the dock's error for this very command (`invalidRequest`,
    /// `notCapable`, `rateTooHigh`, `invalidated` while undocked...), or `notConnected` when the
    /// connection ends first.
    public func perform(_ command: DockCommand, at time: Double = 0) async throws(DockError) {
        _ = try await request(command.jsonLine(time: time))
    }

    /// The dock's motion state now, asked for.
    public func motionState() async throws(DockError) -> MotionState {
        try await request(#"{"command":"getMotionState"}"#) { if case .motionState(let state) = $0 { state } else { nil } }
    }

    /// The limits in force on the dock, asked for; an axis the dock lacks is nil (DockKit's): one
    /// it cannot turn about, or one its hello does not name (pan, tilt, roll).
    public func limits() async throws(DockError) -> DockAccessory.Limits {
        let limits = try await request(#"{"command":"getLimits"}"#) { if case .limits(let limits, _) = $0 { limits } else { nil } }
        return DockAccessory.Limits(limits, capabilities: current?.capabilities)
    }

    /// The dock's own limits (its hardware's: what ``setLimits(_:)`` may narrow, and what a client
    /// that goes gives back), asked for; the limits in force when the dock says none of its own.
    public func dockLimits() async throws(DockError) -> DockAccessory.Limits {
        let own = try await request(#"{"command":"getLimits"}"#) { if case .limits(let limits, let dock) = $0 { dock ?? limits } else { nil } }
        return DockAccessory.Limits(own, capabilities: current?.capabilities)
    }

    /// Sets the dock's limits (a nil axis keeps those in force) and returns them as the dock now
    /// holds them. As DockKit's, limits that name no axis are refused (`invalidRequest`), and so
    /// is a range or speed on an axis the dock lacks (`notCapable`).
    public func setLimits(_ limits: DockAccessory.Limits) async throws(DockError) -> DockAccessory.Limits {
        let held = try await request(DockCommand.setLimits(limits.request).jsonLine(time: 0)) { if case .limits(let held, _) = $0 { held } else { nil } }
        return DockAccessory.Limits(held, capabilities: current?.capabilities)
    }

    /// Turns the dock at `velocity` (rad/s; x pitch, y yaw) until told otherwise, with system
    /// tracking off.
    public func setAngularVelocity(_ velocity: AngularVelocity) async throws(DockError) {
        try await perform(.setAngularVelocity(velocity))
    }

    /// Turns the dock to `orientation` (relative to where it points, with `relative`) over
    /// `duration` seconds (0: as fast as the limits allow) and returns the move's progress once
    /// the dock took the command; ``MotionProgress/completion()`` returns when the move ends.
    public func setOrientation(_ orientation: DockOrientation, duration: Double = 0, relative: Bool = false) async throws(DockError) -> MotionProgress {
        let last = try await latestMotion()
        let start = last.position
        let progress = MotionProgress(target: relative ? start + orientation : orientation, duration: duration, from: start, last: last,
                                      stop: stopping)
        try await watch(progress, DockCommand.setOrientation(orientation, duration: duration, relative: relative).jsonLine(time: 0))
        return progress
    }

    /// As ``setOrientation(_:duration:relative:)`` for a rotation quaternion (DockKit's
    /// Rotation3D: x, y, z, w), turned into the angles it turns by
    /// (``DockVector/init(quaternionX:y:z:w:)``); `invalidRequest` for one of no length.
    public func setOrientation(quaternionX x: Double, y: Double, z: Double, w: Double, duration: Double = 0,
                               relative: Bool = false) async throws(DockError) -> MotionProgress {
        guard let angles = DockOrientation(quaternionX: x, y: y, z: z, w: w) else {
            throw .invalidRequest("a quaternion of no length or not finite")
        }
        return try await setOrientation(angles, duration: duration, relative: relative)
    }

    /// Plays `animation` (it ends where it began) and returns its progress once the dock took
    /// it; ``MotionProgress/completion()`` returns when the dock has played it.
    public func animate(_ animation: DockAnimation) async throws(DockError) -> MotionProgress {
        let last = try await latestMotion()
        let progress = MotionProgress(target: last.position, duration: animation.duration, from: last.position, last: last, isAnimation: true,
                                      stop: stopping)
        try await watch(progress, DockCommand.animate(animation).jsonLine(time: 0))
        return progress
    }

    /// Stops the dock (a move's ``MotionProgress/cancel()``).
    private var stopping: @Sendable () async throws(DockError) -> Void {
        { [weak self] () async throws(DockError) in
            guard let self else { throw DockError.notConnected }
            try await self.setAngularVelocity(.zero)
        }
    }

    /// The last motion state the dock sent, or asked for when it has sent none yet.
    private func latestMotion() async throws(DockError) -> MotionState {
        if let last = session.withLock({ $0.lastMotion }) { return last }
        return try await motionState()
    }

    /// Sends a move's command with `progress` watching the motion states from before it goes
    /// (so that none is missed), and tells it when the dock says the move began.
    private func watch(_ progress: MotionProgress, _ line: String) async throws(DockError) {
        session.withLock { $0.moves.append(progress) }
        do {
            // Taken: from now on the dock's motion states tell the move (from its start, when said).
            if case .done(_, let time, let target) = try await request(line) {
                progress.began(at: time, toward: target)
            } else {
                progress.began(at: nil)
            }
        } catch {
            session.withLock { $0.moves.removeAll { $0 === progress } }
            throw error
        }
    }

    /// The audio route on the tracker's machine now (AVAudioSession's `currentRoute`): its
    /// default input and output, each with its kind of device. A tracker that follows no audio
    /// graph (no PipeWire) answers `notSupported`; a dock alone, `notCapable`.
    public func audioRoute() async throws(DockError) -> AudioRouteNotice.Route {
        try await request(#"{"command":"getAudioRoute"}"#) { if case .audioRoute(let route) = $0 { route } else { nil } }
    }

    /// Whether the tracker frames subjects itself (DockKit's `isSystemTrackingEnabled`), as
    /// last set. A dock without a tracker is not capable.
    public func isSystemTrackingEnabled() async throws(DockError) -> Bool {
        try await request(#"{"command":"getSystemTracking"}"#) { if case .setting(.systemTracking(let on)) = $0 { on } else { nil } }
    }

    /// The tracker's framing mode, as last set (by its options, then by a client).
    public func framingMode() async throws(DockError) -> FramingMode {
        try await request(#"{"command":"getFramingMode"}"#) { if case .setting(.framingMode(let mode)) = $0 { mode } else { nil } }
    }

    /// The tracker's region of interest (unit coordinates, origin at the upper-left, as
    /// ``setRegionOfInterest(_:)`` takes it).
    public func regionOfInterest() async throws(DockError) -> UnitRect {
        try await request(#"{"command":"getRegionOfInterest"}"#) { if case .setting(.regionOfInterest(let rect)) = $0 { rect } else { nil } }
    }

    /// Switches system tracking on or off (DockKit's `setSystemTrackingEnabled`): off, the
    /// tracker stops driving the dock and motion commands are taken; on, it frames again.
    public func setSystemTracking(_ enabled: Bool) async throws(DockError) {
        try await perform(.setSystemTracking(enabled))
    }

    /// Where the tracker puts the primary subject: automatic, center, left or right third.
    public func setFramingMode(_ mode: FramingMode) async throws(DockError) {
        _ = try await request(TrackingRequest.setFramingMode(mode).jsonLine)
    }

    /// The part of the picture the tracker frames in: unit coordinates with the origin at the
    /// upper-left, as DockKit's `regionOfInterest` (observations stay lower-left, as Vision's).
    public func setRegionOfInterest(_ rect: UnitRect) async throws(DockError) {
        _ = try await request(TrackingRequest.setRegionOfInterest(upperLeft: rect).jsonLine)
    }

    /// These subjects rank first, in this order, while in view; `[]`: automatic ranking.
    public func selectSubjects(_ identifiers: [UUID]) async throws(DockError) {
        _ = try await request(TrackingRequest.selectSubjects(identifiers).jsonLine)
    }

    /// Custom tracking (DockKit's `track(_:cameraInformation:)`): the caller's own observations
    /// of one moment (unit coordinates, lower-left origin; an `identifier` keeps a subject's
    /// identity from call to call, a face's `faceYaw` says how much it looks at the camera),
    /// 10 to 30 times a second, with system tracking off; the tracker frames them through
    /// `camera` (its own camera's model without). Throws `rateTooHigh` or `rateTooLow` (not
    /// taken), `invalidRequest` for a camera orientation that is none of ``CameraOrientation``'s
    /// (the others are turned upright first).
    public func track(_ observations: [Observation], camera: CameraInformation? = nil) async throws(DockError) {
        _ = try await request(TrackingRequest.track(observations, camera: camera).jsonLine)
    }

    /// Selects the subject at a point of the picture (unit coordinates, upper-left origin, as a
    /// tap) and returns its identifier; throws `noSubjectFound` when nobody is there.
    public func selectSubject(atX x: Double, y: Double) async throws(DockError) -> UUID {
        try await request(TrackingRequest.selectSubject(x: x, y: y).jsonLine) { if case .selected(let id) = $0 { id } else { nil } }
    }

    /// `request(_:)`'s answer read by `read`; an answer of another kind is `invalidRequest`.
    private func request<Answer>(_ line: String, reading read: (DockMessage) -> Answer?) async throws(DockError) -> Answer {
        guard let answer = read(try await request(line)) else { throw .invalidRequest("the dock answered something else") }
        return answer
    }

    /// Sends `line` tagged with a fresh id; the first answer carrying that id (an error throws).
    private func request(_ line: String) async throws(DockError) -> DockMessage {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DockMessage, any Error>) in
                let id: RequestID? = session.withLock { session in
                    guard session.connected else { return nil }
                    let id = RequestID.number(session.nextID)
                    session.nextID += 1
                    session.pending[id] = continuation
                    return id
                }
                guard let id else { return continuation.resume(throwing: DockError.notConnected) }
                write(id.tagging(line))
            }
        } catch let error as DockError {
            throw error
        } catch {
            throw .notConnected
        }
    }

    /// Closes the connection; the streams finish.
    public func disconnect() {
        session.withLock { $0.hungUp = true }
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func sayHello() {
        write(#"{"type":"hello","protocols":["\#(DockProtocol.name)"]}"#)
    }

    private func write(_ line: String) {
        // A dock that went away is an ended stream, not a SIGPIPE (the writer sends with MSG_NOSIGNAL).
        writer.write(line)
    }

    /// Reads until the dock hangs up or is hung up on, or until `helloDeadline` (monotonic
    /// seconds) passes without a hello; then hangs up itself and ends every stream.
    private func readLoop(helloDeadline: Double) {
        for item in LineReader(fileDescriptor: fd, stopped: { self.current == nil && MonotonicClock.now() >= helloDeadline }) {
            guard case .line(let line) = item else { continue }  // a line too long to be the dock's
            guard let reply = DockReply(line: line) else { continue }
            if let id = reply.id, let waiting = session.withLock({ $0.pending.removeValue(forKey: id) }) {
                if case .error(let code, let message) = reply.message {
                    waiting.resume(throwing: DockError(code: code, message: message))
                } else {
                    waiting.resume(returning: reply.message)
                }
                // The answer is also what it is (a motion state, limits) for the streams below.
                if case .error = reply.message { continue }
            }
            handle(reply.message)
        }
        shutdown(fd, Int32(SHUT_RDWR))  // a dock that never said hello is hung up on
        let (unanswered, unfinished, greeters) = session.withLock { session in
            session.connected = false
            defer { session.pending = [:]; session.moves = []; session.helloWaiters = [] }
            return (Array(session.pending.values), session.moves, session.helloWaiters)
        }
        for waiting in unanswered { waiting.resume(throwing: DockError.notConnected) }
        let inUse = session.withLock { $0.sessionInUse }
        for waiting in greeters { waiting.resume(throwing: inUse ? DockError.sessionInUse : DockError.notConnected) }
        for move in unfinished { move.fail(.notConnected) }
        stateBroadcast.finish(last: .disconnected)
        motionBroadcast.finish()
        eventBroadcast.finish()
        batteryBroadcast.finish()
        errorBroadcast.finish()
        trackingBroadcast.finish()
        audioRouteBroadcast.finish()
    }

    private func handle(_ message: DockMessage) {
        switch message {
        case .hello(let dock):
            let greeters = session.withLock { session in
                session.accessory = dock
                session.docked = true
                defer { session.helloWaiters = [] }
                return session.helloWaiters
            }
            for waiting in greeters { waiting.resume(returning: dock) }
            stateBroadcast.yield(.docked(dock), current: [.docked(dock)])
            // Battery states arrive on subscribe: the dock's are asked for at once.
            if dock.capabilities.contains(DockCapability.battery.rawValue) { query("getBattery") }
        case .dockEvent("undocked"):
            session.withLock { $0.docked = false }
            if let dock = current { stateBroadcast.yield(.undocked(dock), current: [.undocked(dock)]) }
        case .dockEvent("docked"):
            sayHello()  // re-register; the hello answer reports the dock docked again
        case .trackingButton(let enabled):
            let (changed, docked) = session.withLock { session in
                session.accessory?.trackingButtonEnabled = enabled
                return (session.accessory, session.docked)
            }
            // The change is told in the state the dock is in: undocked stays undocked.
            if let changed {
                let state: AccessoryStateChange = docked ? .docked(changed) : .undocked(changed)
                stateBroadcast.yield(state, current: [state])
            }
        case .motionState(let state):
            let watching = session.withLock { session in
                session.lastMotion = state
                return session.moves
            }
            let ended = watching.filter { $0.observe(state) }
            if !ended.isEmpty { session.withLock { $0.moves.removeAll { move in ended.contains { $0 === move } } } }
            motionBroadcast.yield(state, current: [state])
        case .battery(let battery):
            let all = session.withLock { session in
                if let i = session.batteries.firstIndex(where: { $0.name == battery.name }) {
                    session.batteries[i] = battery
                } else {
                    session.batteries.append(battery)
                }
                return session.batteries
            }
            batteryBroadcast.yield(battery, current: all)
        case .accessoryEvent(let event):
            eventBroadcast.yield(event)
        case .error(let code, let message):
            if code == DockError.sessionInUse.code { session.withLock { $0.sessionInUse = true } }
            errorBroadcast.yield((code, message))
        case .trackingState(let record):
            trackingBroadcast.yield(record, current: [record])
        case .audioRouteChange(let notice):
            audioRouteBroadcast.yield(notice)
        case .dockEvent, .limits, .done, .selected, .setting, .audioRoute:
            break
        }
    }
}
