import DockTrackCore
import Foundation

/// A dock at the other end of a one-way command stream (`docktrack track | docksim`, stdout):
/// each command goes out as one JSON line of the dock protocol; where the dock points is
/// worked out by a ``SimulatedDock`` following the same commands, since nothing comes back.
public struct CommandStreamDock: Dock {
    /// The model of the dock's motors.
    public private(set) var model: SimulatedDock
    private let write: (String) throws -> Void

    /// `write` takes one line (without its newline); its errors end the run.
    public init(model: SimulatedDock, write: @escaping (String) throws -> Void) {
        self.model = model
        self.write = write
    }

    public mutating func motion(at time: Double) -> MotionState {
        model.motion(at: time)
    }

    /// Sends the command as it was given (the dock at the other end applies its own limits);
    /// the model takes it as the motors would.
    public mutating func perform(_ command: DockCommand, at time: Double) throws {
        _ = try? model.apply(command, at: time)
        try write(command.jsonLine(time: time))
    }
}
