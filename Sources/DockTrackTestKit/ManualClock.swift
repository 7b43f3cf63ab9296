import DockTrackCore
import Foundation
import Synchronization

/// A clock that moves only when told: inject ``reading`` where a stage takes a clock
/// (`clock: @Sendable () -> Double`, seconds) and a test decides what time it is.
public final class ManualClock: Sendable {
    private let seconds: Mutex<Double>

    public init(at start: Double = 0) {
        seconds = Mutex(start)
    }

    /// The time now, in seconds.
    public func now() -> Double { seconds.withLock { $0 } }

    /// Moves the clock on by `interval` seconds (never back).
    public func advance(by interval: Double) {
        seconds.withLock { $0 += max(0, interval) }
    }

    /// Sets the clock to `time` when that is later than now.
    public func set(to time: Double) {
        seconds.withLock { $0 = max($0, time) }
    }

    /// The clock as stages take it.
    public var reading: @Sendable () -> Double { { [self] in now() } }

    /// The clock as pacing takes it: sleeping on it moves it on by that much, at once.
    public var sleeping: SleepingClock { SleepingClock(now: reading, sleep: { [self] in advance(by: $0) }) }
}
