import Foundation

/// Angles of the dock's three axes in radians (DockKit's convention): x = pitch (tilt,
/// positive tilts down), y = yaw (pan, positive pans right), z = roll.
public struct DockVector: Sendable, Equatable, Codable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double = 0, y: Double = 0, z: Double = 0) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let zero = DockVector()

    public static func + (a: DockVector, b: DockVector) -> DockVector { DockVector(x: a.x + b.x, y: a.y + b.y, z: a.z + b.z) }
    public static func - (a: DockVector, b: DockVector) -> DockVector { DockVector(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z) }
    public static func * (a: DockVector, s: Double) -> DockVector { DockVector(x: a.x * s, y: a.y * s, z: a.z * s) }

    /// The component of an axis.
    public subscript(axis: DockAxis) -> Double {
        get { switch axis { case .pitch: x; case .yaw: y; case .roll: z } }
        set { switch axis { case .pitch: x = newValue; case .yaw: y = newValue; case .roll: z = newValue } }
    }
}

/// An orientation (radians) or an angular velocity (radians per second), by context.
public typealias DockOrientation = DockVector
public typealias AngularVelocity = DockVector

public enum DockAxis: String, Sendable, CaseIterable, Codable {
    case pitch, yaw, roll
}

/// What one axis can do: its position range and its top speed, as a dock declares them.
public struct AxisLimits: Sendable, Equatable, Codable {
    /// Radians. A continuous axis (360° pan) has `-Double.infinity...Double.infinity`.
    public var range: ClosedRange<Double>
    /// Radians per second.
    public var maximumSpeed: Double
    /// Radians per second squared.
    public var maximumAcceleration: Double

    public init(range: ClosedRange<Double>, maximumSpeed: Double, maximumAcceleration: Double) {
        self.range = range
        self.maximumSpeed = maximumSpeed
        self.maximumAcceleration = maximumAcceleration
    }

    /// DockKit's `Limit(positionRange:maximumSpeed:)`, refusing at once (`invalidRequest`) what
    /// no dock takes: a range with nothing in it (`1..<1`), a bound that is not a number, a speed
    /// that is negative or not finite. Its acceleration is the dock's own.
    public init(positionRange: Range<Double>, maximumSpeed: Double) throws(DockError) {
        guard !positionRange.lowerBound.isNaN, !positionRange.upperBound.isNaN else {
            throw .invalidRequest("a position range whose bounds are not numbers")
        }
        guard !positionRange.isEmpty else {
            throw .invalidRequest("position range \(positionRange) is empty: the minimum must be below the maximum")
        }
        guard maximumSpeed.isFinite, maximumSpeed >= 0 else {
            throw .invalidRequest("maximum speed \(maximumSpeed): a finite number, 0 or more")
        }
        self.init(range: positionRange.lowerBound...positionRange.upperBound, maximumSpeed: maximumSpeed, maximumAcceleration: .infinity)
    }

    /// An axis a `setLimits` request leaves out: the limits in force stay. (Its infinite speed
    /// cannot come off the wire, where every given axis has a finite `maximumSpeed`.)
    public static let unchanged = AxisLimits(range: -Double.infinity...Double.infinity, maximumSpeed: .infinity, maximumAcceleration: .infinity)
    public var isUnchanged: Bool { maximumSpeed == .infinity && range.lowerBound == -.infinity && range.upperBound == .infinity }

    /// `value` clamped into the range.
    public func clamp(_ value: Double) -> Double { min(max(value, range.lowerBound), range.upperBound) }

    /// Whether the axis turns without end (a pan with slip rings): a position and the same one
    /// a whole turn away are one direction, and the way to it is the short way round.
    public var turnsWithoutEnd: Bool { range.lowerBound == -.infinity && range.upperBound == .infinity }

    /// The turn from `position` to `target` (radians): the short way round on an axis that
    /// ``turnsWithoutEnd``, else the difference itself (the only way its range allows).
    public func turn(from position: Double, to target: Double) -> Double {
        turnsWithoutEnd ? remainder(target - position, 2 * .pi) : target - position
    }

    /// A speed (rad/s, either sign) capped at the maximum.
    public func clampSpeed(_ value: Double) -> Double { min(max(value, -maximumSpeed), maximumSpeed) }

    enum CodingKeys: String, CodingKey { case minimum, maximum, maximumSpeed, maximumAcceleration }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let low = try c.decodeIfPresent(Double.self, forKey: .minimum) ?? -.infinity
        let high = try c.decodeIfPresent(Double.self, forKey: .maximum) ?? .infinity
        guard low <= high else { throw DecodingError.dataCorruptedError(forKey: .minimum, in: c, debugDescription: "minimum above maximum") }
        range = low...high
        maximumSpeed = try c.decode(Double.self, forKey: .maximumSpeed)
        // Missing: as much as the dock allows (see ``DockLimits/narrowed(to:)``).
        maximumAcceleration = try c.decodeIfPresent(Double.self, forKey: .maximumAcceleration) ?? .infinity
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if range.lowerBound.isFinite { try c.encode(range.lowerBound, forKey: .minimum) }
        if range.upperBound.isFinite { try c.encode(range.upperBound, forKey: .maximum) }
        try c.encode(maximumSpeed, forKey: .maximumSpeed)
        try c.encode(maximumAcceleration, forKey: .maximumAcceleration)
    }
}

/// The limits of every axis. In a `setLimits` request an axis may be left out
/// (``AxisLimits/unchanged``): its limits in force stay.
public struct DockLimits: Sendable, Equatable, Codable {
    public var pitch: AxisLimits
    public var yaw: AxisLimits
    public var roll: AxisLimits

    public init(pitch: AxisLimits = .unchanged, yaw: AxisLimits = .unchanged, roll: AxisLimits = .unchanged) {
        self.pitch = pitch
        self.yaw = yaw
        self.roll = roll
    }

    private enum CodingKeys: String, CodingKey { case pitch, yaw, roll }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pitch = try c.decodeIfPresent(AxisLimits.self, forKey: .pitch) ?? .unchanged
        yaw = try c.decodeIfPresent(AxisLimits.self, forKey: .yaw) ?? .unchanged
        roll = try c.decodeIfPresent(AxisLimits.self, forKey: .roll) ?? .unchanged
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if !pitch.isUnchanged { try c.encode(pitch, forKey: .pitch) }
        if !yaw.isUnchanged { try c.encode(yaw, forKey: .yaw) }
        if !roll.isUnchanged { try c.encode(roll, forKey: .roll) }
    }

    /// A typical desktop tracking stand: 360° pan at up to 3 rad/s, tilt ±30° at 1.5 rad/s,
    /// no roll.
    public static let standard = DockLimits(
        pitch: AxisLimits(range: -0.52...0.52, maximumSpeed: 1.5, maximumAcceleration: 6),
        yaw: AxisLimits(range: -Double.infinity...Double.infinity, maximumSpeed: 3, maximumAcceleration: 8),
        roll: AxisLimits(range: 0...0, maximumSpeed: 0, maximumAcceleration: 0))

    /// These limits on a device that turns only about the axes `capabilities` name (`pan`:
    /// yaw, `tilt`: pitch, `roll`): each other axis cannot move (0...0 at speed 0). A camera
    /// without tilt behind `--backend uvc:` then refuses tilt limits (`notCapable`), is never
    /// asked to tilt, and its clients read its pitch as nil.
    public func withAxes(of capabilities: [DockCapability]) -> DockLimits {
        var limits = self
        let still = AxisLimits(range: 0...0, maximumSpeed: 0, maximumAcceleration: 0)
        for (axis, capability) in [(DockAxis.yaw, DockCapability.pan), (.pitch, .tilt), (.roll, .roll)] where !capabilities.contains(capability) {
            limits[axis] = still
        }
        return limits
    }

    public subscript(axis: DockAxis) -> AxisLimits {
        get { switch axis { case .pitch: pitch; case .yaw: yaw; case .roll: roll } }
        set { switch axis { case .pitch: pitch = newValue; case .yaw: yaw = newValue; case .roll: roll = newValue } }
    }

    /// Limits a client asked for, checked against these (the hardware's): every number finite
    /// (a missing bound is the hardware's), no range wider and no speed or acceleration higher
    /// than the hardware's, none negative; an axis only on a dock that has it. An axis left out
    /// keeps its limits in `current` (the ones in force). As DockKit's, limits that name no axis
    /// and a range with nothing in it (minimum == maximum, on an axis that can move) are refused.
    public func narrowed(to asked: DockLimits, keeping current: DockLimits? = nil) throws(DockError) -> DockLimits {
        guard !DockAxis.allCases.allSatisfy({ asked[$0].isUnchanged }) else {
            throw .invalidRequest("limits name no axis (pitch, yaw or roll)")
        }
        var result = self
        for axis in DockAxis.allCases {
            let hardware = self[axis], wanted = asked[axis]
            if wanted.isUnchanged {
                result[axis] = current?[axis] ?? hardware
                continue
            }
            let numbers = [wanted.range.lowerBound, wanted.range.upperBound, wanted.maximumSpeed, wanted.maximumAcceleration]
            // A missing acceleration (infinity when decoded) is the hardware's.
            let askedAcceleration = wanted.maximumAcceleration == .infinity ? hardware.maximumAcceleration : wanted.maximumAcceleration
            guard !numbers.contains(where: \.isNaN), wanted.maximumSpeed.isFinite, askedAcceleration.isFinite else {
                throw .invalidRequest("\(axis.rawValue) limits must be finite numbers")
            }
            // A bound or speed past the hardware's by less than the wire's rounding (4 decimals:
            // limits read from the dock and sent back) is the hardware's.
            func snapped(_ value: Double, to bound: Double) -> Double { abs(value - bound) <= 1e-4 ? bound : value }
            let low = wanted.range.lowerBound.isInfinite ? hardware.range.lowerBound : snapped(wanted.range.lowerBound, to: hardware.range.lowerBound)
            let high = wanted.range.upperBound.isInfinite ? hardware.range.upperBound : snapped(wanted.range.upperBound, to: hardware.range.upperBound)
            let speed = snapped(wanted.maximumSpeed, to: hardware.maximumSpeed)
            let acceleration = snapped(askedAcceleration, to: hardware.maximumAcceleration)
            // An axis the dock lacks (it cannot turn about it) takes no limits but its own, as
            // DockKit's setLimits refuses an axis the dock does not support: roll on most stands,
            // tilt on a pan-only camera.
            let lacking = hardware.maximumSpeed == 0 && hardware.range.lowerBound == hardware.range.upperBound
            if lacking && (speed > 0 || low < hardware.range.lowerBound || high > hardware.range.upperBound) {
                throw .notCapable(axis.rawValue)
            }
            guard speed >= 0, acceleration >= 0 else {
                throw .invalidRequest("\(axis.rawValue) maximumSpeed and maximumAcceleration must not be negative")
            }
            guard speed <= hardware.maximumSpeed, acceleration <= hardware.maximumAcceleration else {
                throw .invalidRequest("\(axis.rawValue) speed \(wanted.maximumSpeed) rad/s or acceleration \(acceleration) rad/s² above the dock's \(hardware.maximumSpeed) and \(hardware.maximumAcceleration)")
            }
            guard low >= hardware.range.lowerBound, high <= hardware.range.upperBound, low <= high else {
                throw .invalidRequest("\(axis.rawValue) range \(low)...\(high) is wider than the dock's \(hardware.range.lowerBound)...\(hardware.range.upperBound)")
            }
            guard low < high || hardware.range.lowerBound == hardware.range.upperBound else {
                throw .invalidRequest("\(axis.rawValue) range \(low)...\(high) is empty: the minimum must be below the maximum")
            }
            result[axis] = AxisLimits(range: low...high, maximumSpeed: speed, maximumAcceleration: acceleration)
        }
        return result
    }

    /// These limits with each axis that `asked` gives replaced by it (the others kept).
    public func updated(by asked: DockLimits) -> DockLimits {
        var result = self
        for axis in DockAxis.allCases where !asked[axis].isUnchanged { result[axis] = asked[axis] }
        return result
    }

    /// `orientation` with every axis clamped into its range.
    /// `motion` as a dock of these limits can be: positions within range, speeds within the
    /// maximum (a prediction past the dock's last report may overshoot both).
    public func bounding(_ motion: MotionState) -> MotionState {
        var bounded = motion
        bounded.position = clamp(motion.position)
        for axis in DockAxis.allCases { bounded.velocity[axis] = self[axis].clampSpeed(motion.velocity[axis]) }
        return bounded
    }

    public func clamp(_ orientation: DockOrientation) -> DockOrientation {
        DockOrientation(x: pitch.clamp(orientation.x), y: yaw.clamp(orientation.y), z: roll.clamp(orientation.z))
    }
}

/// The camera on the dock: how much of the world one picture spans. Turns an offset in the
/// picture into the angle the dock must turn, and back.
public struct CameraModel: Sendable, Equatable {
    /// Radians across the picture's width and height.
    public var horizontalFieldOfView: Double
    public var verticalFieldOfView: Double

    public init(horizontalFieldOfView: Double, verticalFieldOfView: Double) {
        self.horizontalFieldOfView = horizontalFieldOfView
        self.verticalFieldOfView = verticalFieldOfView
    }

    /// The same camera turned a quarter: its fields of view swap.
    public var turnedQuarter: CameraModel {
        CameraModel(horizontalFieldOfView: verticalFieldOfView, verticalFieldOfView: horizontalFieldOfView)
    }

    /// A camera with this horizontal field of view and square pixels for a picture of `size`.
    public init(horizontalFieldOfView: Double, size: ImageSize) {
        let aspect = Double(size.height) / Double(max(1, size.width))
        self.init(horizontalFieldOfView: horizontalFieldOfView,
                  verticalFieldOfView: 2 * atan(tan(horizontalFieldOfView / 2) * aspect))
    }

    /// A typical webcam: 70° across a 4:3 picture.
    public static let webcam = CameraModel(horizontalFieldOfView: 70 * .pi / 180, size: ImageSize(width: 4, height: 3))

    /// The turn (yaw right, pitch down positive) that brings the camera's centre to the point
    /// (unit coordinates, lower-left origin) of the picture: pinhole projection.
    public func angles(toward x: Double, _ y: Double) -> DockOrientation {
        let yaw = atan((x - 0.5) * 2 * tan(horizontalFieldOfView / 2))
        let pitch = -atan((y - 0.5) * 2 * tan(verticalFieldOfView / 2))
        return DockOrientation(x: pitch, y: yaw, z: 0)
    }

    /// Where in the picture (unit coordinates, lower-left origin) a direction `angles` away
    /// from the camera's centre appears: pinhole projection of each angle taken the short way
    /// round. A direction 90° or more off the camera's axis (beside or behind it) is placed far
    /// beyond the picture's edge on its own side (the projection of ``farthestAngle``), never
    /// back in the picture: tan(180.4°) would put a person behind the camera in its middle.
    public func point(at angles: DockOrientation) -> (x: Double, y: Double) {
        func inFront(_ angle: Double) -> Double {
            let short = remainder(angle, 2 * .pi)
            return min(max(short, -Self.farthestAngle), Self.farthestAngle)
        }
        return (0.5 + tan(inFront(angles.y)) / (2 * tan(horizontalFieldOfView / 2)),
                0.5 - tan(inFront(angles.x)) / (2 * tan(verticalFieldOfView / 2)))
    }

    /// The largest angle off the axis that ``point(at:)`` projects (radians, 89.5°): about 115
    /// picture widths out for a 70° camera, and ``angles(toward:_:)`` gives it back.
    public static let farthestAngle = 89.5 * Double.pi / 180
}
