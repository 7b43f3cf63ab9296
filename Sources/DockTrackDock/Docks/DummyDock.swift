import DockTrackCore
import Foundation

/// A dock that takes every command and moves ideally: velocities are followed at once and
/// integrated exactly, orientations are reached at once; no limits, no rates. It keeps what it
/// was sent, for tests and for programs that want to see what the frame loop asks of a dock.
package struct DummyDock: Dock {
    package private(set) var commands: [TimedDockCommand] = []
    package private(set) var position: DockOrientation
    package private(set) var velocity = AngularVelocity.zero
    package private(set) var time: Double
    /// When set, the next command is refused with this error (once).
    package var refuseNext: DockError?

    package init(position: DockOrientation = .zero, time: Double = 0) {
        self.position = position
        self.time = time
    }

    package mutating func motion(at time: Double) -> MotionState {
        advance(to: time)
        return MotionState(time: self.time, position: position, velocity: velocity)
    }

    package mutating func perform(_ command: DockCommand, at time: Double) throws(DockError) {
        advance(to: time)
        if let refusal = refuseNext {
            refuseNext = nil
            throw refusal
        }
        commands.append(TimedDockCommand(time: time, command: command))
        switch command {
        case .setAngularVelocity(let v): velocity = v
        case .setOrientation(let target, _, let relative): position = relative ? position + target : target; velocity = .zero
        default: break
        }
    }

    private mutating func advance(to newTime: Double) {
        guard newTime.isFinite, newTime > time else { return }
        position = position + velocity * (newTime - time)
        time = newTime
    }
}
