import DockTrackCore

/// One axis of the framing controller: turns an angle error into a velocity command.
///
/// The error first passes a dead band with hysteresis (at rest, errors below `deadBand` cause
/// no motion, so a subject jittering in place leaves the dock still; once moving, the axis
/// goes on until the error is below `settleBand`, so it stops close to the target) and a soft
/// zone (the gain ramps up from 0 at the band to full at the zone's edge, so motion starts
/// gently; once moving, the full gain applies down to the settle band). Then PI with anti-windup (the integral only runs near the target, is bounded, and
/// is frozen while the output saturates), a derivative on the low-pass filtered error, and
/// limits on velocity and acceleration. After obs-face-tracker's controller.
package struct AxisController: Sendable, Equatable {
    package struct Params: Sendable, Equatable {
        /// Radians of error ignored while at rest.
        package var deadBand = 0.025
        /// Radians of error at which a moving axis comes to rest.
        package var settleBand = 0.006
        /// The integral only accumulates while the error is below this (no windup during
        /// large moves, which the proportional term handles).
        package var integralZone = 0.1
        /// Radians of error at which the full gain applies.
        package var softZone = 0.09
        /// Velocity per radian of error (1/s).
        package var proportionalGain = 3.0
        /// Velocity per radian-second of accumulated error (1/s²).
        package var integralGain = 0.6
        /// The integral term's contribution never exceeds this velocity (rad/s).
        package var integralLimit = 0.3
        /// Velocity per radian-per-second of error change (dimensionless).
        package var derivativeGain = 0.08
        /// Time constant of the derivative's low-pass filter (s).
        package var derivativeFilter = 0.1
        /// Time constant with which the integral fades while the subject is lost (s).
        package var integralDecay = 0.8
        /// A subject's rate (rad/s) below this is not followed by feed-forward (a person
        /// standing still whose box jitters); the rate's full share applies from twice this.
        package var feedforwardDeadBand = 0.04
        package init() {}
    }

    package var params: Params
    private(set) var integral = 0.0
    private var lastError: Double?
    private var derivative = 0.0
    /// The last velocity commanded (rad/s).
    package private(set) var output = 0.0
    /// Whether the axis is at rest inside the dead band.
    package private(set) var isSettled = true

    package init(params: Params = Params()) {
        self.params = params
    }

    /// The error after the dead band and the soft zone at rest; while moving, less the settle
    /// band (full gain to the end of a move: a soft zone there would crawl the last few degrees).
    package func shaped(_ error: Double) -> Double {
        let size = abs(error)
        guard isSettled else {
            guard size > params.settleBand else { return 0 }
            let zone = params.settleBand + (params.softZone - params.deadBand)
            return error * min(1, (size - params.settleBand) / (zone - params.settleBand))
        }
        guard size > params.deadBand else { return 0 }
        guard size < params.softZone else { return error }
        return error * (size - params.deadBand) / (params.softZone - params.deadBand)
    }

    /// The velocity for an error of `error` radians, `dt` seconds after the last update,
    /// within `limits` (speed, acceleration). `position` is the axis' present angle: motion past
    /// the range's ends is refused. `feedforward`: how fast the target itself moves (rad/s),
    /// added to the command (past ``Params/feedforwardDeadBand``) so that a moving target is
    /// followed without the lag a feedback loop alone keeps.
    package mutating func update(error: Double, dt: Double, limits: AxisLimits, position: Double, feedforward: Double = 0) -> Double {
        let e = shaped(error)
        isSettled = e == 0
        if dt > 0, let last = lastError {
            let raw = (e - last) / dt
            let alpha = dt / (params.derivativeFilter + dt)
            derivative += alpha * (raw - derivative)
        }
        lastError = e
        // The target's rate is followed once the axis moves: at rest inside the dead band it
        // stays at rest, whatever a jittering box's rate says.
        let moving = e != 0 || output != 0
        var wanted = params.proportionalGain * e + params.integralGain * integral + params.derivativeGain * derivative
            + (moving ? followed(feedforward) : 0)
        let saturated = abs(wanted) > limits.maximumSpeed
        // Anti-windup: integrate only while the output is not saturated, or when the error
        // would pull the output back from saturation; bound the integral's share.
        if dt > 0, e != 0, abs(error) < params.integralZone, !saturated || (e * integral < 0) {
            integral += e * dt
            let bound = params.integralLimit / max(params.integralGain, 1e-9)
            integral = min(max(integral, -bound), bound)
        }
        if e == 0 { integral *= max(0, 1 - dt / params.integralDecay) }
        wanted = min(max(wanted, -limits.maximumSpeed), limits.maximumSpeed)
        return limit(wanted, dt: dt, limits: limits, position: position)
    }

    /// The share of a target's rate the axis adds: none within the dead band, all of it from
    /// twice the band, in between a ramp (so that the rate a jitter makes never kicks the dock).
    package func followed(_ rate: Double) -> Double {
        guard rate.isFinite else { return 0 }
        let band = params.feedforwardDeadBand, size = abs(rate)
        guard size > band else { return 0 }
        return rate * min(1, (size - band) / band)
    }

    /// Holds still (the subject is lost): the velocity ramps down within the acceleration
    /// limit and the integral fades.
    package mutating func hold(dt: Double, limits: AxisLimits, position: Double) -> Double {
        integral *= max(0, 1 - dt / params.integralDecay)
        lastError = nil
        derivative = 0
        return limit(0, dt: dt, limits: limits, position: position)
    }

    /// The time the first command after a start (or a restart across a jump in time) is taken
    /// to span from the velocity before: observations come at least 10 times a second, so a
    /// command moves no faster from rest than the acceleration allows in a tenth of a second
    /// (after a 1000 s gap the first command was 2.41 rad/s, 24 rad/s^2 against 8).
    package static let startingSpan = 0.1

    private mutating func limit(_ wanted: Double, dt: Double, limits: AxisLimits, position: Double) -> Double {
        var velocity = wanted
        if limits.maximumAcceleration > 0 {
            let step = limits.maximumAcceleration * (dt > 0 ? dt : Self.startingSpan)
            velocity = min(max(velocity, output - step), output + step)
        }
        if position >= limits.range.upperBound && velocity > 0 { velocity = 0 }
        if position <= limits.range.lowerBound && velocity < 0 { velocity = 0 }
        if limits.maximumSpeed <= 0 { velocity = 0 }
        output = velocity
        return velocity
    }
}
