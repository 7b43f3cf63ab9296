import Foundation

/// What a dock in another process or a device reported of its motion, on the frame clock: where
/// it pointed at any time between its reports (interpolated) and a little past the last one
/// (extrapolated with the last velocity), and how long it takes to answer a command
/// (``LatencyEstimator``). Remote and device docks keep one; the frame loop asks it where the
/// dock pointed when a frame was captured.
package struct ReportedMotion: Sendable {
    /// The reports kept, oldest first (at most `capacity`).
    package private(set) var states: [MotionState] = []
    package var capacity = 512
    /// Past the last report, motion is extrapolated this long at most (then held).
    package var maximumExtrapolation = 0.3
    /// The motors' acceleration limits (rad/s²), when known: extrapolated speeds change no faster.
    package var acceleration: DockVector?
    package var latency: LatencyEstimator
    /// Commands sent (time; velocity, `nil` for a command of another kind; the orientation an
    /// absolute move goes to), newest last: past the last report, the dock follows the ones that
    /// have reached its motors, and a move to an orientation stops there.
    private var commands: [(time: Double, velocity: AngularVelocity?, target: DockOrientation?)] = []

    package init(initialLatency: Double = 0.05) {
        latency = LatencyEstimator(initial: initialLatency)
    }

    /// The newest report.
    package var latest: MotionState? { states.last }

    /// Takes a report. Reports out of time order or with numbers that are not finite are
    /// dropped (a report is a measurement: one that makes no sense is no measurement).
    package mutating func record(_ state: MotionState) {
        let numbers = [state.time, state.position.x, state.position.y, state.position.z, state.velocity.x, state.velocity.y, state.velocity.z]
        guard numbers.allSatisfy(\.isFinite) else { return }
        if let last = states.last, state.time <= last.time {
            if state.time == last.time { states[states.count - 1] = state }
            return
        }
        states.append(state)
        if states.count > capacity { states.removeFirst(states.count - capacity) }
        latency.observed(state)
    }

    /// Notes a command sent at `time`, for the latency estimate.
    package mutating func commanded(_ command: DockCommand, at time: Double) {
        latency.commanded(command, at: time, last: states.last)
        guard time.isFinite, time >= (commands.last?.time ?? -.infinity) else { return }
        switch command {
        case .setAngularVelocity(let v): commands.append((time, v, nil))
        case .setOrientation(let o, _, let relative): commands.append((time, nil, relative ? nil : o))
        case .animate: commands.append((time, nil, nil))
        case .setSystemTracking, .setLimits: return
        }
        if commands.count > 64 { commands.removeFirst(commands.count - 64) }
    }

    /// The dock stopped its motors itself at `time` (its clock): as it was taken off, say. Past
    /// the last report it stays where it was; commands sent before no longer carry it on.
    package mutating func stopped(at time: Double) {
        commands.removeAll { $0.time >= time - latency.estimate }
        commands.append((time - latency.estimate, .zero, nil))
        if let last = states.last, last.velocity != .zero, time.isFinite, time >= last.time {
            record(MotionState(time: time, position: extrapolated(from: last, to: time).position, velocity: .zero, error: last.error))
        }
    }

    /// Where the dock pointed at `time`: between two reports, positions and velocities are
    /// interpolated; before the first, the first; after the last, the last moved on at its
    /// velocity for at most ``maximumExtrapolation`` seconds. `nil` before any report.
    package func motion(at time: Double) -> MotionState? {
        guard let last = states.last, let first = states.first else { return nil }
        guard time.isFinite else { return last }
        if time >= last.time { return extrapolated(from: last, to: time) }
        if time <= first.time { return MotionState(time: time, position: first.position, velocity: first.velocity, error: first.error) }
        // The first report after `time` (binary search: reports are in time order).
        var low = 0, high = states.count - 1
        while low < high {
            let mid = (low + high) / 2
            if states[mid].time < time { low = mid + 1 } else { high = mid }
        }
        let after = states[low], before = states[low - 1]
        let share = (time - before.time) / (after.time - before.time)
        return MotionState(time: time, position: before.position + (after.position - before.position) * share,
                           velocity: before.velocity + (after.velocity - before.velocity) * share, error: before.error)
    }

    /// The last report moved on to `time` (at most ``maximumExtrapolation`` ahead): toward the
    /// velocity of each velocity command from when it reaches the motors (sent + the latency
    /// estimate), within ``acceleration`` when known; else at the reported velocity, but never
    /// past the orientation of an absolute move that reached them. (A device that jumps to its
    /// target reports the jump as a speed of radians per poll: carried on, that put the camera
    /// far past the target whenever the next report came late.)
    private func extrapolated(from last: MotionState, to time: Double) -> MotionState {
        let end = min(time, last.time + maximumExtrapolation)
        let delay = latency.estimate
        var velocity = last.velocity, position = last.position, t = last.time
        var next = commands.firstIndex { $0.time + delay > last.time } ?? commands.count
        var wanted = next > 0 ? commands[next - 1].velocity ?? last.velocity : last.velocity
        var target = next > 0 ? commands[next - 1].target : nil
        let dt = 0.005
        while t < end {
            while next < commands.count, commands[next].time + delay <= t {
                wanted = commands[next].velocity ?? last.velocity
                target = commands[next].target
                next += 1
            }
            let step = min(dt, end - t)
            for axis in DockAxis.allCases {
                let limit = acceleration.map { $0[axis] * step } ?? .infinity
                velocity[axis] = min(max(wanted[axis], velocity[axis] - limit), velocity[axis] + limit)
            }
            for axis in DockAxis.allCases {
                position[axis] += velocity[axis] * step
                // Reached (or passed) the target on this axis: there it stays.
                guard let goal = target?[axis], velocity[axis] != 0,
                      (position[axis] - goal) * velocity[axis] >= 0, (last.position[axis] - goal) * velocity[axis] <= 0 else { continue }
                position[axis] = goal
                velocity[axis] = 0
            }
            t += step
        }
        return MotionState(time: time, position: position, velocity: velocity, error: last.error)
    }
}

/// Estimates a dock's command-to-motion latency from the motion states it reports, as Frigate's
/// autotracker calibrates its move latency: a command that sets an axis at rest moving is timed
/// to the first report that shows that axis moving the commanded way, the onset traced back
/// along the reported velocity. The estimate is the median of the last samples.
package struct LatencyEstimator: Sendable {
    /// The estimate before any measurement.
    package let initial: Double
    /// Samples kept for the median.
    package var window = 9
    /// An axis is at rest below this speed (rad/s); a move is seen past this many radians.
    package var restSpeed = 0.01
    package var movedBy = 0.002
    /// A command not seen answered within this long is not timed (refused, or too small).
    package var timeout = 1.5
    package private(set) var samples: [Double] = []
    /// The command being timed; `still`: the last report since it that showed no motion yet.
    private var pending: (time: Double, axis: DockAxis, direction: Double, from: Double, still: Double)?

    package init(initial: Double) {
        self.initial = initial
    }

    /// The median of the samples, or `initial` before there are any.
    package var estimate: Double { samples.isEmpty ? initial : Statistics.percentile(samples, 0.5) }

    /// A command sent at `time`; `last` is the dock's last report.
    package mutating func commanded(_ command: DockCommand, at time: Double, last: MotionState?) {
        if let pending, time - pending.time > timeout { self.pending = nil }
        guard pending == nil, let last else { return }
        let atRest = [last.velocity.x, last.velocity.y].allSatisfy { abs($0) < restSpeed }
        guard atRest else { return }
        var wanted = DockVector.zero
        switch command {
        case .setAngularVelocity(let v): wanted = v
        case .setOrientation(let o, _, let relative): wanted = relative ? o : o - last.position
        default: return
        }
        // The axis asked to move the most; a velocity must be worth measuring.
        let axis: DockAxis = abs(wanted.y) >= abs(wanted.x) ? .yaw : .pitch
        let threshold = if case .setAngularVelocity = command { 0.05 } else { 0.02 }
        guard abs(wanted[axis]) > threshold, wanted[axis].isFinite else { return }
        pending = (time, axis, wanted[axis] < 0 ? -1 : 1, last.position[axis], time)
    }

    /// A report from the dock.
    package mutating func observed(_ state: MotionState) {
        guard let p = pending, state.time >= p.time else { return }
        if state.time - p.time > timeout {
            pending = nil
            return
        }
        let moved = (state.position[p.axis] - p.from) * p.direction
        let speed = state.velocity[p.axis] * p.direction
        guard moved > movedBy || speed > restSpeed * 3 else {
            pending?.still = state.time
            return
        }
        // Traced back from the report along its velocity: the motion began about this long ago,
        // but not before a report that still showed none (a speed read low, from positions far
        // apart on a busy machine, traces back too far).
        let since = speed > restSpeed ? min(state.time - p.time, max(0, moved) / speed) : 0
        samples.append(max(0, state.time - since - p.time, p.still - p.time))
        if samples.count > window { samples.removeFirst(samples.count - window) }
        pending = nil
    }
}
