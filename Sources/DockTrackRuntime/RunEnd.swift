import DockTrackCore

/// How every run ends, whatever ends it (the end of its input, an error, a signal, a window
/// closed, a client gone): the dock is told to stop, at the time of the run's last command on
/// the dock's clock, and given up to ``settleSeconds`` to carry the stop out (a dock in another
/// process, a device); then what the run wrote is closed. On a command stream the stop is the
/// last line. `track`, custom tracking and `simulate` end here, each from a `defer`, so that no
/// way out leaves a dock turning.
public enum RunEnd {
    /// How long a dock is given to carry out the last stop.
    public static let settleSeconds = 3.0

    /// Stops `dock` at `time` (a refusal is no reason not to close the rest), waits for it to
    /// settle, then runs `closing` (the outputs).
    public static func end(_ dock: inout some Dock, at time: Double, closing: () -> Void = {}) {
        try? dock.perform(.setAngularVelocity(.zero), at: time)
        dock.settle(timeout: settleSeconds)
        closing()
    }
}
