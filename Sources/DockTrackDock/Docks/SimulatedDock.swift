import DockTrackCore
import Foundation


/// A pan/tilt dock's motors in simulation: velocity and orientation commands and animations,
/// limited in range, speed and acceleration, on a clock the caller advances (so a test of a
/// 10 s motion takes milliseconds and always gives the same answer).
package struct SimulatedDock: Sendable {
    enum Motion: Sendable {
        case velocity(AngularVelocity)
        case orientation(DockOrientation, speedCap: DockVector)
        case animation(DockAnimation, start: Double, from: DockOrientation)
    }

    /// The limits in force: the hardware's, or narrower ones a client set.
    package private(set) var limits: DockLimits
    /// What the motors can do at most; `setLimits` may only narrow these.
    package let hardwareLimits: DockLimits
    package private(set) var time: Double
    package private(set) var position: DockOrientation
    package private(set) var velocity = AngularVelocity.zero
    package private(set) var systemTracking = true
    package private(set) var lastError: DockError?
    private var motion = Motion.velocity(.zero)
    private var orientationRate = RateLimiter(maximumPerSecond: 2)
    private var animationRate = RateLimiter(maximumPerSecond: 2)
    /// Integration step (seconds).
    package var step = 0.002
    /// With a value: a velocity not renewed for that many seconds stops (see ``advance(to:)``);
    /// `nil`: motion goes on across any jump, in closed form.
    package var stopsAfterSilence: Double?

    package init(limits: DockLimits = .standard, position: DockOrientation = .zero, time: Double = 0) {
        self.limits = limits
        hardwareLimits = limits
        self.position = limits.clamp(position)
        self.time = time.isFinite ? time : 0
    }

    package var motionState: MotionState { MotionState(time: time, position: position, velocity: velocity, error: lastError) }

    /// Whether an animation is playing.
    package var isAnimating: Bool { if case .animation = motion { true } else { false } }

    /// Where a move to an orientation goes (absolute, within the limits), while it goes there.
    package var orientationTarget: DockOrientation? {
        if case .orientation(let target, _) = motion { target } else { nil }
    }

    /// Takes a command issued at `time` (the dock first advances to it) and returns it as the
    /// motors took it: speeds and targets within the limits (what a real device behind the
    /// simulation is sent).
    @discardableResult
    package mutating func apply(_ command: DockCommand, at time: Double) throws(DockError) -> DockCommand {
        advance(to: time)
        do {
            let accepted = try accept(command)
            lastError = nil
            return accepted
        } catch {
            lastError = error
            throw error
        }
    }

    private mutating func accept(_ command: DockCommand) throws(DockError) -> DockCommand {
        switch command {
        case .setAngularVelocity(let v):
            guard [v.x, v.y, v.z].allSatisfy(\.isFinite) else { throw .invalidRequest("velocity must be finite") }
            if v.z != 0 && limits.roll.maximumSpeed == 0 { throw .notCapable("roll") }
            var capped = v
            for axis in DockAxis.allCases { capped[axis] = limits[axis].clampSpeed(v[axis]) }
            if isAnimating { return .setAngularVelocity(capped) }  // an animation runs to its end; tracking resumes after
            motion = .velocity(capped)
            return .setAngularVelocity(capped)
        case .setOrientation(let o, let duration, let relative):
            guard [o.x, o.y, o.z, duration].allSatisfy(\.isFinite), duration >= 0 else { throw .invalidRequest("orientation and duration must be finite, duration >= 0") }
            if o.z != 0 && hardwareLimits.roll.maximumSpeed == 0 { throw .notCapable("roll") }
            try orientationRate.accept(at: time)
            let target = limits.clamp(relative ? position + o : o)
            guard [target.x, target.y, target.z].allSatisfy(\.isFinite) else { throw .invalidRequest("orientation out of range") }
            var cap = DockVector(x: limits.pitch.maximumSpeed, y: limits.yaw.maximumSpeed, z: limits.roll.maximumSpeed)
            if duration > 0 {
                for axis in DockAxis.allCases {
                    let speed = Self.cruiseSpeed(distance: abs(target[axis] - position[axis]), duration: duration,
                                                 acceleration: limits[axis].maximumAcceleration)
                    cap[axis] = min(cap[axis], max(speed, 1e-6))
                }
            }
            motion = .orientation(target, speedCap: cap)
            return .setOrientation(relative ? target - position : target, duration: duration, relative: relative)
        case .animate(let animation):
            try animationRate.accept(at: time)
            motion = .animation(animation, start: time, from: position)
        case .setSystemTracking(let enabled):
            systemTracking = enabled
        case .setLimits(let new):
            limits = try hardwareLimits.narrowed(to: new, keeping: limits)
            position = limits.clamp(position)
            return .setLimits(limits)
        }
        return command
    }

    /// The cruise speed of a move over `distance` that takes `duration` from rest to rest,
    /// speeding up and braking at `acceleration`: the smaller root of v² - a·D·v + a·d = 0, in
    /// the form that stays exact for a large acceleration (d/D) and for a zero one (0). A move
    /// too long for the duration gets no cap (the fastest the limits allow) and arrives late.
    static func cruiseSpeed(distance d: Double, duration t: Double, acceleration a: Double) -> Double {
        let slack = t * t - 4 * d / a
        guard slack >= 0 else { return a > 0 ? .infinity : 0 }
        return 2 * d / (t + slack.squareRoot())
    }

    /// Moves the motors on to `time`. Stretches where every axis moves at a constant speed (or
    /// stands still) are taken in one closed-form step, so a jump of hours (a clock in epoch
    /// seconds, a huge time on the wire) costs no more than one of a second.
    package mutating func advance(to newTime: Double) {
        guard newTime.isFinite else { return }
        // A silence longer than `stopsAfterSilence` (a peer's clock that jumped, a stream that
        // stopped): a velocity is held for that long, as a real dock's idle stop would, then the
        // motors stop, and the position stays where that leaves it (a request at time 1e308
        // once sent docksim's pan to infinity).
        if let silence = stopsAfterSilence, newTime - time > silence, case .velocity(let v) = motion, v != .zero {
            advanceSteadily(to: time + silence)
            motion = .velocity(.zero)
        }
        advanceSteadily(to: newTime)
    }

    /// Seconds a velocity command is carried on without a word from the client, for docks
    /// driven by a peer's clock (docksim, the command stream's model).
    package static let peerSilence = 1.0

    private mutating func advanceSteadily(to newTime: Double) {
        // However long the jump, at most about 20 000 steps: past 40 s of motion that is not
        // steady (a tiny acceleration limit, say) the step grows with the jump.
        let stride = max(step, (newTime - time) / 20_000)
        while time < newTime - 1e-12 {
            let remaining = newTime - time
            if remaining > 0.5 {
                let span = min(constantSpan(), remaining)
                if span >= 0.05 {
                    coast(span)
                    continue
                }
            }
            let dt = min(stride, remaining)
            integrate(dt)
            let next = time + dt
            // Past 2^44 s a step of 2 ms no longer moves the clock: the motion is steady there.
            guard next > time else { coast(remaining); return }
            time = next
        }
    }

    /// Whether `remaining` to a target (and `speed`) are nothing at the target's scale: a
    /// target of 1e14 rad is only held to within its own rounding.
    private static func arrived(_ remaining: Double, speed: Double, at target: Double) -> Bool {
        let tolerance = max(1e-9, 8 * target.ulp)
        return abs(remaining) <= tolerance && abs(speed) <= max(1e-9, tolerance / 0.002)
    }

    /// How long from now every axis keeps its present velocity (infinity when all stand still
    /// for good), as the integrator would run it; 0 while anything accelerates.
    private func constantSpan() -> Double {
        var span = Double.infinity
        for axis in DockAxis.allCases {
            let l = limits[axis], v = velocity[axis], p = position[axis]
            switch motion {
            case .animation:
                return 0
            case .velocity(let wanted):
                let target = l.clampSpeed(wanted[axis])
                if v == target {
                    if v > 0, l.range.upperBound.isFinite { span = min(span, max(0, (l.range.upperBound - p) / v)) }
                    if v < 0, l.range.lowerBound.isFinite { span = min(span, max(0, (l.range.lowerBound - p) / v)) }
                } else if v == 0 && ((target > 0 && p >= l.range.upperBound) || (target < 0 && p <= l.range.lowerBound) || target == 0) {
                    continue  // held at a stop
                } else {
                    return 0
                }
            case .orientation(let targetPose, let cap):
                let remaining = targetPose[axis] - p
                let cruise = min(cap[axis], l.maximumSpeed)
                if Self.arrived(remaining, speed: v, at: targetPose[axis]) { continue }
                if cruise <= 0 && v == 0 { continue }  // an axis that cannot move
                guard abs(v) == cruise, (v > 0) == (remaining > 0), l.maximumAcceleration > 0 else { return 0 }
                // Braking starts where the stopping speed falls below the cruise speed; keep
                // a margin of a few steps before it.
                let braking = cruise * cruise / (2 * l.maximumAcceleration)
                let left = (abs(remaining) - braking) / cruise - 4 * step
                guard left > 0 else { return 0 }
                span = min(span, left)
            }
        }
        return span
    }

    /// `dt` seconds at the present velocities, stopping at the range's ends.
    private mutating func coast(_ dt: Double) {
        for axis in DockAxis.allCases {
            let l = limits[axis]
            let p = position[axis] + velocity[axis] * dt
            if p >= l.range.upperBound || p <= l.range.lowerBound {
                position[axis] = l.clamp(p)
                if velocity[axis] != 0 { velocity[axis] = 0 }
            } else if p.isFinite {
                position[axis] = p
            }
        }
        if case .orientation(let target, _) = motion {
            for axis in DockAxis.allCases where Self.arrived(target[axis] - position[axis], speed: velocity[axis], at: target[axis]) {
                position[axis] = target[axis]
                velocity[axis] = 0
            }
        }
        time += dt
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

extension SimulatedDock: Dock {
    package mutating func motion(at time: Double) -> MotionState {
        advance(to: time)
        return motionState
    }

    package mutating func perform(_ command: DockCommand, at time: Double) throws(DockError) {
        try apply(command, at: time)
    }
}
