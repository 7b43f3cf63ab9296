import DockTrackCore
import Foundation

/// A dock at the other end of a one-way command stream (`docktrack track | docksim`, stdout):
/// each command goes out as one JSON line of the dock protocol; where the dock points is
/// worked out by a ``SimulatedDock`` following the same commands, since nothing comes back.
package struct CommandStreamDock: Dock {
    /// The model of the dock's motors.
    package private(set) var model: SimulatedDock
    private let write: (String) throws -> Void

    private var idleStop: IdleStopHolder?

    /// `write` takes one line (without its newline); its errors end the run.
    package init(model: SimulatedDock, write: @escaping (String) throws -> Void) {
        self.model = model
        self.write = write
    }

    /// A stream to a dock that follows it in real time (a live camera's commands, timed on
    /// `clock`): a stop line goes out after `seconds` without a frame while the last command
    /// keeps the dock turning (``IdleStop``); `write` is called from the idle thread then.
    package init(model: SimulatedDock, stopWhenIdle seconds: Double, clock: @escaping @Sendable () -> Double,
                write: @escaping @Sendable (String) throws -> Void) {
        self.init(model: model, write: write)
        idleStop = IdleStopHolder(IdleStop(after: seconds, clock: clock) {
            try? write(DockCommand.setAngularVelocity(.zero).jsonLine(time: clock()))
        })
    }

    package mutating func motion(at time: Double) -> MotionState {
        idleStop?.stop.contact()
        return model.motion(at: time)
    }

    /// Sends the command as the model of the dock's motors took it: within the limits in force,
    /// every number finite; a command the model refuses (a speed of 1e19, limits of -1 or
    /// 1e308 rad/s, roll on a dock without it) is thrown and never written, as docksim would
    /// refuse it.
    package mutating func perform(_ command: DockCommand, at time: Double) throws {
        let accepted = try model.apply(command, at: time)
        idleStop?.stop.contact(moving: IdleStop.keepsMoving(accepted))
        try write(accepted.jsonLine(time: time))
    }
}

/// Ends an ``IdleStop``'s thread when the last copy of the dock that holds it goes.
final class IdleStopHolder: Sendable {
    let stop: IdleStop
    init(_ stop: IdleStop) { self.stop = stop }
    deinit { stop.end() }
}
