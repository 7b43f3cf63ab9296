import Foundation

/// DockKit's animations: short motions that start from the current pose and end there.
public enum DockAnimation: String, Sendable, CaseIterable, Codable {
    /// A nod: tilt down and up twice.
    case yes
    /// A shake: pan left and right twice.
    case no
    /// Waking up: look up, glance left and right, settle.
    case wakeup
    /// A quick tilt that snaps back with a damped oscillation.
    case kapow

    /// Seconds the animation lasts.
    public var duration: Double {
        switch self {
        case .yes, .no: 1.2
        case .wakeup: 2.0
        case .kapow: 1.5
        }
    }

    /// The offset from the starting pose `t` seconds into the animation (zero before and after).
    public func offset(at t: Double) -> DockOrientation {
        guard t > 0, t < duration else { return .zero }
        let phase = t / duration
        switch self {
        case .yes:
            return DockOrientation(x: 0.15 * sin(2 * 2 * .pi * phase), y: 0, z: 0)
        case .no:
            return DockOrientation(x: 0, y: 0.2 * sin(2 * 2 * .pi * phase), z: 0)
        case .wakeup:
            // Up over the first quarter, a look left and right, back down over the last quarter.
            let lift = phase < 0.25 ? phase / 0.25 : phase > 0.75 ? (1 - phase) / 0.25 : 1
            let glance = phase > 0.25 && phase < 0.75 ? 0.25 * sin(2 * .pi * (phase - 0.25) / 0.5) : 0
            return DockOrientation(x: -0.2 * lift, y: glance, z: 0)
        case .kapow:
            // A snap to 0.25 rad down in the first 0.1 s, then a damped oscillation back.
            let kick = 0.1
            if t < kick { return DockOrientation(x: 0.25 * t / kick, y: 0, z: 0) }
            let s = t - kick
            return DockOrientation(x: 0.25 * exp(-3 * s) * cos(2 * .pi * 2.5 * s), y: 0, z: 0)
        }
    }
}

/// What a controller or an app asks of a dock. JSON Lines form: see ``jsonLine``.
public enum DockCommand: Sendable, Equatable {
    /// Turn at these angular velocities (rad/s) until told otherwise.
    case setAngularVelocity(AngularVelocity)
    /// Move to an orientation (radians; added to the present one when `relative`) in
    /// `duration` seconds (as fast as the limits allow when 0).
    case setOrientation(DockOrientation, duration: Double, relative: Bool)
    /// Play an animation from the present pose; tracking resumes afterwards.
    case animate(DockAnimation)
    /// Switch the dock's own (system) tracking on or off.
    case setSystemTracking(Bool)
    /// Narrow the dock's limits.
    case setLimits(DockLimits)

    /// The command's name on the wire.
    public var name: String {
        switch self {
        case .setAngularVelocity: "setAngularVelocity"
        case .setOrientation: "setOrientation"
        case .animate: "animate"
        case .setSystemTracking: "setSystemTracking"
        case .setLimits: "setLimits"
        }
    }

    /// `{"time":1.0,"command":"setAngularVelocity","velocity":{"x":0.0,"y":0.12,"z":0.0}}` and
    /// likewise `"orientation"`+`"duration"`+`"relative"`, `"animation"`, `"enabled"`, `"limits"`.
    public func jsonLine(time: Double) -> String {
        var line = JSONLine()
        line.add("time", time, digits: 3)
        line.add("command", name)
        switch self {
        case .setAngularVelocity(let v):
            line.add("velocity", object: v.jsonLine)
        case .setOrientation(let o, let duration, let relative):
            line.add("orientation", object: o.jsonLine)
            line.add("duration", duration, digits: 3)
            line.add("relative", relative)
        case .animate(let animation):
            line.add("animation", animation.rawValue)
        case .setSystemTracking(let enabled):
            line.add("enabled", enabled)
        case .setLimits(let limits):
            var object = JSONLine()
            for axis in DockAxis.allCases {
                let l = limits[axis]
                var item = JSONLine()
                if l.range.lowerBound.isFinite { item.add("minimum", l.range.lowerBound, digits: 4) }
                if l.range.upperBound.isFinite { item.add("maximum", l.range.upperBound, digits: 4) }
                item.add("maximumSpeed", l.maximumSpeed, digits: 4)
                item.add("maximumAcceleration", l.maximumAcceleration, digits: 4)
                object.add(axis.rawValue, object: item)
            }
            line.add("limits", object: object)
        }
        return line.text
    }
}

/// A command with the time it was issued (seconds, the sender's clock).
public struct TimedDockCommand: Sendable, Equatable {
    public var time: Double
    public var command: DockCommand

    public init(time: Double, command: DockCommand) {
        self.time = time
        self.command = command
    }
}

extension TimedDockCommand: Decodable {
    private enum Keys: String, CodingKey { case time, command, velocity, orientation, duration, relative, animation, enabled, limits }

    /// Reads a line in the form of ``DockCommand/jsonLine(time:)``; `time` may be left out (0).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        time = try c.decodeIfPresent(Double.self, forKey: .time) ?? 0
        let name = try c.decode(String.self, forKey: .command)
        switch name {
        case "setAngularVelocity":
            command = .setAngularVelocity(try c.decode(AngularVelocity.self, forKey: .velocity))
        case "setOrientation":
            command = .setOrientation(try c.decode(DockOrientation.self, forKey: .orientation),
                                      duration: try c.decodeIfPresent(Double.self, forKey: .duration) ?? 0,
                                      relative: try c.decodeIfPresent(Bool.self, forKey: .relative) ?? false)
        case "animate":
            command = .animate(try c.decode(DockAnimation.self, forKey: .animation))
        case "setSystemTracking":
            command = .setSystemTracking(try c.decode(Bool.self, forKey: .enabled))
        case "setLimits":
            command = .setLimits(try c.decode(DockLimits.self, forKey: .limits))
        default:
            throw DecodingError.dataCorruptedError(forKey: .command, in: c, debugDescription: "unknown command '\(name)'")
        }
    }
}

extension DockVector {
    /// `{"x":…,"y":…,"z":…}`, 4 decimals.
    public var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("x", x, digits: 4)
        line.add("y", y, digits: 4)
        line.add("z", z, digits: 4)
        return line
    }
}

/// Errors a caller of a dock can act on (DockKit's).
public enum DockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dock lacks the capability (an axis, animations, ...).
    case notCapable(String)
    /// The request is malformed or out of range.
    case invalidRequest(String)
    /// The dock went away: register again when it comes back.
    case invalidated
    /// No dock is connected.
    case notConnected
    /// More requests per second than allowed.
    case rateTooHigh(limit: Double)
    /// Fewer requests per second than needed.
    case rateTooLow(limit: Double)
    /// Nobody at the point given for a selection.
    case noSubjectFound

    /// The error's name on the wire.
    public var code: String {
        switch self {
        case .notCapable: "notCapable"
        case .invalidRequest: "invalidRequest"
        case .invalidated: "invalidated"
        case .notConnected: "notConnected"
        case .rateTooHigh: "rateTooHigh"
        case .rateTooLow: "rateTooLow"
        case .noSubjectFound: "noSubjectFound"
        }
    }

    public var description: String {
        switch self {
        case .notCapable(let what): "not capable: \(what)"
        case .invalidRequest(let why): "invalid request: \(why)"
        case .invalidated: "invalidated: the dock went away; register again"
        case .notConnected: "not connected to a dock"
        case .rateTooHigh(let limit): String(format: "rate too high: at most %g per second", limit)
        case .rateTooLow(let limit): String(format: "rate too low: at least %g per second", limit)
        case .noSubjectFound: "no subject found at that point"
        }
    }
}

/// Refuses requests that come faster than `maximumPerSecond` (orientation commands and
/// animations: at most 2 per second).
public struct RateLimiter: Sendable, Equatable {
    public let maximumPerSecond: Double
    private var accepted: [Double] = []

    public init(maximumPerSecond: Double) {
        self.maximumPerSecond = maximumPerSecond
    }

    /// Accepts a request at `time` (seconds) or throws ``DockError/rateTooHigh(limit:)``.
    public mutating func accept(at time: Double) throws(DockError) {
        accepted.removeAll { time - $0 >= 1 }
        guard Double(accepted.count) < maximumPerSecond else { throw .rateTooHigh(limit: maximumPerSecond) }
        accepted.append(time)
    }
}

/// Checks that observations fed for custom tracking arrive at 10 to 30 per second, judged over
/// the last second once a second of them has arrived.
public struct ObservationRateMonitor: Sendable, Equatable {
    public var allowed: ClosedRange<Double>
    private var times: [Double] = []

    public init(allowed: ClosedRange<Double> = 10...30) {
        self.allowed = allowed
    }

    /// Records an observation at `time`; throws when the rate over the last second is outside
    /// the allowed range (a gap longer than 1 s counts as too slow at once).
    public mutating func record(at time: Double) throws(DockError) {
        if let last = times.last, time - last > 1 {
            times = [time]
            throw .rateTooLow(limit: allowed.lowerBound)
        }
        times.append(time)
        times.removeAll { time - $0 > 1 }
        // The count over the window [time - 1, time] includes both ends: n samples span n-1 gaps.
        guard let first = times.first, time - first >= 0.95 else {
            if Double(times.count) > allowed.upperBound + 1 { throw .rateTooHigh(limit: allowed.upperBound) }
            return
        }
        let rate = Double(times.count - 1) / (time - first)
        if rate > allowed.upperBound * 1.1 { throw .rateTooHigh(limit: allowed.upperBound) }
        if rate < allowed.lowerBound * 0.9 { throw .rateTooLow(limit: allowed.lowerBound) }
    }
}
