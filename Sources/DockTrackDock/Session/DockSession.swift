import DockTrackCore
import Foundation

/// An event the simulator plays at a set time: `{"at":2.0,"event":"button","id":1,"pressed":true}`,
/// `undocked`, `docked`, `cameraShutter`, `cameraFlip`, `cameraZoom` (`factor`), `charging` (`enabled`),
/// `trackingButton` (`enabled`).
package struct ScriptedEvent: Sendable, Equatable, Decodable {
    package var at: Double
    package var event: String
    package var id: Int?
    package var pressed: Bool?
    package var factor: Double?
    package var enabled: Bool?

    package init(at: Double, event: String, id: Int? = nil, pressed: Bool? = nil, factor: Double? = nil, enabled: Bool? = nil) {
        self.at = at
        self.event = event
        self.id = id
        self.pressed = pressed
        self.factor = factor
        self.enabled = enabled
    }
}

/// The dock side of the protocol: reads request lines, answers, and reports events. Pure
/// logic on the caller's clock; the `docksim` process wraps it in a pipe or a socket.
///
/// Protocol `org.docktrack.dock/1`, JSON Lines both ways:
/// - hello: `{"type":"hello","protocols":["org.docktrack.dock/1"]}` → `{"type":"hello","protocol":…,
///   "accessory":{…},"capabilities":[…],"limits":{…}}` (then `docked`);
/// - commands: the lines of ``DockCommand/jsonLine(time:)``;
/// - queries: `{"command":"getMotionState"}`, `getBattery`, `getLimits`, `getAccessory`;
/// - events: `{"type":"event","event":"docked"|"undocked"}`, `{"type":"motionState",…}`,
///   `{"type":"battery",…}`, `{"type":"accessoryEvent","event":"button","id":1,"pressed":true}` …;
/// - errors: `{"type":"error","code":"invalidRequest","message":…,"line":7}`; the session goes on;
/// - request ids: a request may carry `"id"` (an integer or a string); every answer to it carries
///   the same id first (`{"id":7,"type":"error",…}`), and a command with an id the dock took is
///   answered `{"id":7,"type":"done","command":"setOrientation","time":12.5}` (a move says when
///   it began on the dock's clock).
package struct DockSession {
    package static let protocolName = DockProtocol.name

    package var identity: AccessoryIdentity
    /// What the dock can do, as its hello says: the simulated dock's, or with `hardware` what
    /// that device has (a PTZ camera has no battery, buttons or animations).
    package var capabilities: [DockCapability] { hardware?.capabilities ?? Self.simulatedCapabilities }
    package static let simulatedCapabilities: [DockCapability] = [.pan, .tilt, .battery, .buttons, .animations, .systemTracking]
    package private(set) var dock: SimulatedDock
    /// The dock's batteries, the one that drives the motors first.
    package private(set) var batteries: [BatteryState]
    /// The battery that drives the motors.
    package var battery: BatteryState { batteries[0] }
    /// Whether the dock's own tracking button works (DockKit's `trackingButtonEnabled`); a
    /// script's `trackingButton` event switches it.
    package private(set) var trackingButtonEnabled = true
    /// A real PTZ device the session drives too (VISCA, UVC): every command the simulated
    /// motors accept is sent on, and motion states report the device's own position.
    package var hardware: (any DockHardware)?
    /// Whether the phone (the client) sits on the dock. Commands while undocked are refused
    /// with `invalidated`; the client says hello again after `docked`.
    package private(set) var isDocked = true
    /// Whether the client has said hello since the last (re)docking. A one-way pipe may send
    /// commands without hello: the first command opens the session implicitly.
    package private(set) var hasSession = false
    private var lineNumber = 0
    /// Error replies sent so far.
    package private(set) var errorCount = 0
    /// The wall clock motion states are dated by (DockKit's timestamp is a wall time; the
    /// dock's `time` is its own clock from its first client).
    package var wallClock: @Sendable () -> Date = Date.init
    /// The wall time at the dock's time 0, from the first time the session was moved on.
    private var wallAtZero: Double?
    private var script: [ScriptedEvent]

    package init(identity: AccessoryIdentity, dock: SimulatedDock = SimulatedDock(), battery: BatteryState = BatteryState(),
                otherBatteries: [BatteryState] = [], script: [ScriptedEvent] = []) {
        self.identity = identity
        self.dock = dock
        // Requests come on the client's clock: a jump in it does not carry a velocity across.
        self.dock.stopsAfterSilence = self.dock.stopsAfterSilence ?? SimulatedDock.peerSilence
        batteries = [battery] + otherBatteries
        self.script = script.sorted { $0.at < $1.at }
    }

    /// The client holding the session left: the next client must say hello (or send a command)
    /// to open it again.
    package mutating func closeSession() { hasSession = false }

    /// Moves the simulation on to `time` and returns the events that happened on the way,
    /// with a battery's state whenever it is news (``BatteryState/isNews(after:)``: a percent
    /// drained or charged, low battery, charging begun or ended).
    package mutating func advance(to time: Double) -> [String] {
        if wallAtZero == nil { wallAtZero = wallClock().timeIntervalSince1970 - time }
        var out: [String] = []
        while let next = script.first, next.at <= time {
            script.removeFirst()
            out += step(to: next.at)
            out += play(next)
        }
        out += step(to: time)
        return out
    }

    /// The batteries' news on the way to `time`.
    private mutating func step(to time: Double) -> [String] {
        let dt = max(0, time - dock.time)
        let speed = abs(dock.velocity.x) + abs(dock.velocity.y)
        dock.advance(to: time)
        var news: [String] = []
        for i in batteries.indices {
            let before = batteries[i]
            batteries[i].advance(by: dt, speed: speed)
            if batteries[i].isNews(after: before) { news.append(batteries[i].jsonLine) }
        }
        return capabilities.contains(.battery) ? news : []
    }

    private mutating func play(_ event: ScriptedEvent) -> [String] {
        var line = JSONLine()
        switch event.event {
        case "undocked", "docked":
            isDocked = event.event == "docked"
            hasSession = false
            if !isDocked { _ = try? dock.apply(.setAngularVelocity(.zero), at: dock.time) }
            line.add("type", "event")
            line.add("event", event.event)
        case "charging":
            for i in batteries.indices { batteries[i].setCharging(event.enabled ?? true) }
            return batteryLines
        case "trackingButton":
            trackingButtonEnabled = event.enabled ?? true
            line.add("type", "event")
            line.add("event", "trackingButton")
            line.add("enabled", trackingButtonEnabled)
        default:
            line.add("type", "accessoryEvent")
            line.add("event", event.event)
            if let id = event.id { line.add("id", id) }
            if let pressed = event.pressed { line.add("pressed", pressed) }
            if let factor = event.factor { line.add("factor", factor, digits: 3) }
        }
        line.add("time", event.at, digits: 3)
        return [line.text]
    }

    /// Answers one request (already parsed, or the error its parsing gave; nil for a blank
    /// line) received at `time`. The answers to a request with an `id` carry it, and a command
    /// with an `id` that the dock took is answered `{"id":…,"type":"done","command":…}`.
    package mutating func handle(_ parsed: Result<DockRequest, DockRequest.Failure>?, at time: Double) -> [String] {
        lineNumber += 1
        let out = advance(to: time)
        let request: DockRequest
        switch parsed {
        case nil: return out
        case .success(let r)?: request = r
        case .failure(let failure)?: return out + DockAnswer(to: failure, [error(failure.error)]).lines
        }
        return out + DockAnswer(to: request, answer(request, at: time)).lines
    }

    /// A state line per battery; none for a dock without a battery (a PTZ camera).
    package var batteryLines: [String] { capabilities.contains(.battery) ? batteries.map(\.jsonLine) : [] }

    /// The answers to one request, without its id.
    private mutating func answer(_ request: DockRequest, at time: Double) -> [String] {
        switch request.kind {
        case .hello(let offered):
            guard offered.contains(Self.protocolName) else {
                return [error(.notSupported("protocols \(offered); this dock speaks \(Self.protocolName)"))]
            }
            guard isDocked else { return [error(.invalidated)] }
            hasSession = true
            return [hello(), motionStateLine()]
        case .query(let name):
            guard isDocked else { return [error(.invalidated)] }
            hasSession = true
            switch name {
            case "getMotionState": return [motionStateLine()]
            case "getBattery":
                let lines = batteryLines
                return lines.isEmpty ? [error(.notCapable("battery"))] : lines
            case "getLimits": return [limitsLine()]
            case "getSystemTracking" where capabilities.contains(.systemTracking):
                // The dock's own switch, as last set (it has no tracker to frame with, nor framing to read).
                return [TrackerSetting.systemTracking(dock.systemTracking).jsonLine]
            case let tracker where DockRequest.trackerQueries.contains(tracker):
                return [error(.notCapable("\(tracker): a dock alone does not track (docktrack track --serve does)"))]
            default: return [hello()]
            }
        case .tracking(let tracking):
            guard isDocked else { return [error(.invalidated)] }
            hasSession = true
            return [error(.notCapable("\(tracking.name): a dock alone does not track (docktrack track --serve does)"))]
        case .command(let command):
            guard isDocked else { return [error(.invalidated)] }
            hasSession = true
            do {
                // The device gets the command as the simulated motors took it: within the
                // limits, every number finite. A command the device refuses (not connected,
                // not capable) does not move the model either: the dock reports where it is.
                var next = dock
                let accepted = try next.apply(command, at: max(dock.time, time))
                try hardware?.apply(accepted, at: max(dock.time, time))
                dock = next
                var out: [String] = []
                if case .setLimits = command { out.append(limitsLine()) }
                if request.id != nil { out.append(Self.doneLine(command.name, movingAt: dock.time, target: dock.orientationTarget)) }
                return out
            } catch {
                return [self.error(error)]
            }
        }
    }

    /// `{"type":"motionState","time":…,"position":{…},"velocity":{…}}`, plus `"error"` when the
    /// last command failed.
    package func motionStateLine() -> String {
        let position = (try? hardware?.orientation()) ?? dock.position
        let date = wallAtZero.map { Date(timeIntervalSince1970: $0 + dock.time) }
        return MotionState(time: dock.time, position: position, velocity: dock.velocity, error: dock.lastError, date: date).jsonLine
    }

    private func hello() -> String {
        Self.helloLine(identity, capabilities: capabilities, docked: isDocked, trackingButtonEnabled: trackingButtonEnabled,
                       limits: dock.limits, dockLimits: dock.hardwareLimits)
    }

    /// `{"type":"hello","protocol":…,"accessory":{…},"capabilities":[…],"docked":true,"trackingButtonEnabled":true,
    /// "limits":{…},"dockLimits":{…}}`: `limits` those in force, `dockLimits` the dock's own (what
    /// `setLimits` may narrow).
    package static func helloLine(_ identity: AccessoryIdentity, capabilities: [DockCapability], docked: Bool, trackingButtonEnabled: Bool,
                                 limits: DockLimits, dockLimits: DockLimits) -> String {
        var line = JSONLine()
        line.add("type", "hello")
        line.add("protocol", protocolName)
        line.add("accessory", object: identity.jsonLine)
        line.add("capabilities", strings: capabilities.map(\.rawValue))
        line.add("docked", docked)
        line.add("trackingButtonEnabled", trackingButtonEnabled)
        line.add("limits", object: limits.jsonLine)
        line.add("dockLimits", object: dockLimits.jsonLine)
        return line.text
    }

    private func limitsLine() -> String { Self.limitsLine(dock.limits, dockLimits: dock.hardwareLimits, time: dock.time) }

    /// `{"type":"limits","time":…,"limits":{…},"dockLimits":{…}}`: the limits in force, and the
    /// dock's own.
    package static func limitsLine(_ limits: DockLimits, dockLimits: DockLimits, time: Double) -> String {
        var line = JSONLine()
        line.add("time", time, digits: 3)
        line.add("type", "limits")
        line.add("limits", object: limits.jsonLine)
        line.add("dockLimits", object: dockLimits.jsonLine)
        return line.text
    }

    private mutating func error(_ error: DockError) -> String {
        errorCount += 1
        return Self.errorLine(error, line: lineNumber)
    }

    /// `{"type":"error","code":…,"message":…,"line":7}`: the error answering request line
    /// `line` of the session (without its id: ``DockAnswer`` adds it).
    package static func errorLine(_ error: DockError, line number: Int? = nil) -> String {
        var line = JSONLine()
        line.add("type", "error")
        line.add("code", error.code)
        line.add("message", error.description)
        if let number { line.add("line", number) }
        return line.text
    }

    /// `{"type":"done","command":…}`: a command with an id was taken. A move that takes time
    /// (`setOrientation`, `animate`) also says when it began on the dock's clock
    /// (`"time":…`), the start of its progress; a move to an orientation says where it goes
    /// (`"target":{…}`: absolute, within the limits; a relative move's from where the dock was
    /// when it took it).
    package static func doneLine(_ command: String, movingAt time: Double? = nil, target: DockOrientation? = nil) -> String {
        var done = JSONLine()
        done.add("type", "done")
        done.add("command", command)
        if let time, command == "setOrientation" || command == "animate" { done.add("time", time, digits: 3) }
        if let target, command == "setOrientation" { done.add("target", object: target.jsonLine) }
        return done.text
    }
}
