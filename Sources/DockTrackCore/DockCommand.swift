import Foundation

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

    /// The velocity of a `setAngularVelocity`.
    public var velocity: AngularVelocity? {
        if case .setAngularVelocity(let v) = self { v } else { nil }
    }

    /// The limits of a `setLimits`.
    public var limits: DockLimits? {
        if case .setLimits(let limits) = self { limits } else { nil }
    }

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
            for axis in DockAxis.allCases where !limits[axis].isUnchanged {
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
