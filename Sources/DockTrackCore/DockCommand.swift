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
            line.add("limits", object: limits.jsonLine)
        }
        return line.text
    }
}

extension DockLimits {
    /// `{"yaw":{"minimum":…,"maximum":…,"maximumSpeed":…,"maximumAcceleration":…},…}`: the axes
    /// that have limits (an unchanged axis is left out), as `setLimits` and the limits answers say them.
    public var jsonLine: JSONLine {
        var object = JSONLine()
        for axis in DockAxis.allCases where !self[axis].isUnchanged {
            let l = self[axis]
            var item = JSONLine()
            if l.range.lowerBound.isFinite { item.add("minimum", l.range.lowerBound, digits: 4) }
            if l.range.upperBound.isFinite { item.add("maximum", l.range.upperBound, digits: 4) }
            item.add("maximumSpeed", l.maximumSpeed, digits: 4)
            item.add("maximumAcceleration", l.maximumAcceleration, digits: 4)
            object.add(axis.rawValue, object: item)
        }
        return object
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
            command = .setOrientation(try c.decode(OrientationOnTheWire.self, forKey: .orientation).angles,
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

/// An orientation as a client sends it: angles `{"x":…,"y":…,"z":…}` (pitch, yaw, roll in
/// radians, as DockKit's Vector3D), or a rotation quaternion `{"x":…,"y":…,"z":…,"w":…}` (as
/// DockKit's Rotation3D), read as the angles it turns by.
struct OrientationOnTheWire: Decodable {
    let angles: DockOrientation

    private enum Keys: String, CodingKey { case x, y, z, w }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let x = try c.decode(Double.self, forKey: .x), y = try c.decode(Double.self, forKey: .y), z = try c.decode(Double.self, forKey: .z)
        guard let w = try c.decodeIfPresent(Double.self, forKey: .w) else {
            angles = DockOrientation(x: x, y: y, z: z)
            return
        }
        guard let turned = DockOrientation(quaternionX: x, y: y, z: z, w: w) else {
            throw DecodingError.dataCorruptedError(forKey: .w, in: c, debugDescription: "a quaternion of no length or not finite")
        }
        angles = turned
    }
}

extension DockVector {
    /// The angles a rotation quaternion turns by: yaw about y, then pitch about x, then roll
    /// about z (the order of a pan-tilt dock's axes: the tilt axis rides on the pan axis).
    /// A 90-degree yaw, (0, sin 45°, 0, cos 45°), is `y` = π/2. `nil` for a quaternion of no
    /// length or with a part that is not finite; the rest are normalised first.
    public init?(quaternionX qx: Double, y qy: Double, z qz: Double, w qw: Double) {
        let norm = (qx * qx + qy * qy + qz * qz + qw * qw).squareRoot()
        guard norm.isFinite, norm > 1e-9 else { return nil }
        let x = qx / norm, y = qy / norm, z = qz / norm, w = qw / norm
        // The rotation matrix's entries this needs.
        let m11 = 1 - 2 * (y * y + z * z), m13 = 2 * (x * z + w * y)
        let m21 = 2 * (x * y + w * z), m22 = 1 - 2 * (x * x + z * z), m23 = 2 * (y * z - w * x)
        let m31 = 2 * (x * z - w * y), m33 = 1 - 2 * (x * x + y * y)
        let pitch = asin(-min(max(m23, -1), 1))
        if abs(m23) < 0.9999999 {
            self.init(x: pitch, y: atan2(m13, m33), z: atan2(m21, m22))
        } else {  // looking straight up or down: yaw and roll are one turn
            self.init(x: pitch, y: atan2(-m31, m11), z: 0)
        }
    }

    /// `{"x":…,"y":…,"z":…}`, 4 decimals.
    public var jsonLine: JSONLine {
        var line = JSONLine()
        line.add("x", x, digits: 4)
        line.add("y", y, digits: 4)
        line.add("z", z, digits: 4)
        return line
    }
}
