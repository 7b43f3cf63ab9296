import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in seconds: the clock V4L2 stamps buffers with, and the one capture-to-command
/// latency is measured on.
public enum MonotonicClock {
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// CLOCK_THREAD_CPUTIME_ID in seconds: the CPU time of the calling thread alone, for timing a
/// stage that shares its core with other threads (the bench's profile on one core).
public enum ThreadCPUClock {
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A clock that can also wait: what pacing takes, so that a test's manual clock (which moves
/// when slept on) serves as well as the real one.
public struct SleepingClock: Sendable {
    /// Seconds now.
    public let now: @Sendable () -> Double
    /// Waits this many seconds (never called with less than zero).
    public let sleep: @Sendable (Double) -> Void

    public init(now: @escaping @Sendable () -> Double, sleep: @escaping @Sendable (Double) -> Void) {
        self.now = now
        self.sleep = sleep
    }

    /// CLOCK_MONOTONIC, slept on by the calling thread.
    public static let monotonic = SleepingClock(now: MonotonicClock.now, sleep: { Thread.sleep(forTimeInterval: $0) })
}

/// A recording played in real time, the one place it is done (`track` and `simulate` on a file
/// before a live dock, the virtual camera on a file, the live closed-loop simulation, `bench`'s
/// live replay): the first recorded time starts the clock, each later one is due as long after
/// that start as it is after the first, and ``wait(for:)`` returns when it is due, at once when
/// it is late.
public struct RealTimePacer: Sendable {
    public let clock: SleepingClock
    /// The clock's time the first recorded time is due at, once known.
    private var startedAt: Double?
    private var firstRecorded: Double?

    /// `start`: the clock's time the first recorded time is due at (its first call's time when `nil`).
    public init(clock: SleepingClock = .monotonic, startingAt start: Double? = nil) {
        self.clock = clock
        startedAt = start
    }

    /// Waits until `recorded` is due; returns the clock's time then (later than due when late).
    @discardableResult
    public mutating func wait(for recorded: Double) -> Double {
        let first = firstRecorded ?? recorded
        let start = startedAt ?? clock.now()
        (firstRecorded, startedAt) = (first, start)
        let due = start + (recorded - first)
        let wait = due - clock.now()
        if wait > 0 { clock.sleep(wait) }
        return max(due, clock.now())
    }
}
