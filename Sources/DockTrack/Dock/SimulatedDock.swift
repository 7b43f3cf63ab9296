import Foundation

/// What the dock reports about its motion (DockKit's motion state).
public struct MotionState: Sendable, Equatable {
    public var time: Double
    public var position: DockOrientation
    public var velocity: AngularVelocity
    /// Why the last command could not be followed, if it could not.
    public var error: DockError?

    public init(time: Double, position: DockOrientation, velocity: AngularVelocity, error: DockError? = nil) {
        self.time = time
        self.position = position
        self.velocity = velocity
        self.error = error
    }
}

/// A pan/tilt dock's motors in simulation: velocity and orientation commands and animations,
/// limited in range, speed and acceleration, on a clock the caller advances (so a test of a
/// 10 s motion takes milliseconds and always gives the same answer).
public struct SimulatedDock: Sendable {
    enum Motion: Sendable {
        case velocity(AngularVelocity)
        case orientation(DockOrientation, speedCap: DockVector)
        case animation(DockAnimation, start: Double, from: DockOrientation)
    }

    public var limits: DockLimits
    public private(set) var time: Double
    public private(set) var position: DockOrientation
    public private(set) var velocity = AngularVelocity.zero
    public private(set) var systemTracking = true
    public private(set) var lastError: DockError?
    private var motion = Motion.velocity(.zero)
    private var orientationRate = RateLimiter(maximumPerSecond: 2)
    private var animationRate = RateLimiter(maximumPerSecond: 2)
    /// Integration step (seconds).
    public var step = 0.002

    public init(limits: DockLimits = .standard, position: DockOrientation = .zero, time: Double = 0) {
        self.limits = limits
        self.position = limits.clamp(position)
        self.time = time
    }

    public var motionState: MotionState { MotionState(time: time, position: position, velocity: velocity, error: lastError) }

    /// Whether an animation is playing.
    public var isAnimating: Bool { if case .animation = motion { true } else { false } }

    /// Takes a command issued at `time` (the dock first advances to it).
    public mutating func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        advance(to: time)
        do {
            try accept(command)
            lastError = nil
        } catch {
            lastError = error
            throw error
        }
    }

    private mutating func accept(_ command: DockCommand) throws(DockError) {
        switch command {
        case .setAngularVelocity(let v):
            guard [v.x, v.y, v.z].allSatisfy(\.isFinite) else { throw .invalidRequest("velocity must be finite") }
            if v.z != 0 && limits.roll.maximumSpeed == 0 { throw .notCapable("roll") }
            if isAnimating { return }  // an animation runs to its end; tracking resumes after
            motion = .velocity(v)
        case .setOrientation(let o, let duration, let relative):
            guard [o.x, o.y, o.z, duration].allSatisfy(\.isFinite), duration >= 0 else { throw .invalidRequest("orientation and duration must be finite, duration >= 0") }
            try orientationRate.accept(at: time)
            let target = limits.clamp(relative ? position + o : o)
            var cap = DockVector(x: limits.pitch.maximumSpeed, y: limits.yaw.maximumSpeed, z: limits.roll.maximumSpeed)
            if duration > 0 {
                for axis in DockAxis.allCases {
                    cap[axis] = min(cap[axis], max(abs(target[axis] - position[axis]) / duration * 1.5, 1e-6))
                }
            }
            motion = .orientation(target, speedCap: cap)
        case .animate(let animation):
            try animationRate.accept(at: time)
            motion = .animation(animation, start: time, from: position)
        case .setSystemTracking(let enabled):
            systemTracking = enabled
        case .setLimits(let new):
            limits = new
            position = limits.clamp(position)
        }
    }

    /// Moves the motors on to `time`.
    public mutating func advance(to newTime: Double) {
        while time < newTime - 1e-12 {
            let dt = min(step, newTime - time)
            integrate(dt)
            time += dt
        }
    }

    private mutating func integrate(_ dt: Double) {
        switch motion {
        case .animation(let animation, let start, let from):
            let t = time + dt - start
            let next = limits.clamp(from + animation.offset(at: t))
            velocity = (next - position) * (1 / dt)
            position = next
            if t >= animation.duration {
                motion = .velocity(.zero)
                velocity = .zero
            }
            return
        case .velocity(let wanted):
            for axis in DockAxis.allCases { move(axis, toward: wanted[axis], dt: dt) }
        case .orientation(let target, let cap):
            for axis in DockAxis.allCases {
                let l = limits[axis]
                let remaining = target[axis] - position[axis]
                // The fastest speed that still stops at the target under the acceleration limit.
                let stopping = (2 * l.maximumAcceleration * abs(remaining)).squareRoot()
                let wanted = (remaining < 0 ? -1 : 1) * min(cap[axis], stopping, abs(remaining) / dt)
                move(axis, toward: wanted, dt: dt)
            }
        }
    }

    private mutating func move(_ axis: DockAxis, toward wanted: Double, dt: Double) {
        let l = limits[axis]
        let step = l.maximumAcceleration * dt
        var v = min(max(wanted, velocity[axis] - step), velocity[axis] + step)
        v = min(max(v, -l.maximumSpeed), l.maximumSpeed)
        var p = position[axis] + v * dt
        if p > l.range.upperBound { p = l.range.upperBound; v = 0 }
        if p < l.range.lowerBound { p = l.range.lowerBound; v = 0 }
        velocity[axis] = v
        position[axis] = p
    }
}
