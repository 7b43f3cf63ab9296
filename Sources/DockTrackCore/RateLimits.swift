import Foundation

/// Refuses requests that come faster than `maximumPerSecond` (orientation commands and
/// animations: at most 2 per second).
public struct RateLimiter: Sendable, Equatable {
    public let maximumPerSecond: Double
    private var accepted: [Double] = []

    public init(maximumPerSecond: Double) {
        self.maximumPerSecond = maximumPerSecond
    }

    /// Accepts a request at `time` (seconds) or throws ``DockError/rateTooHigh(limit:)``.
    public mutating func accept(at time: Double) throws(DockError) {
        accepted.removeAll { time - $0 >= 1 }
        guard Double(accepted.count) < maximumPerSecond else { throw .rateTooHigh(limit: maximumPerSecond) }
        accepted.append(time)
    }
}

/// Checks that observations fed for custom tracking arrive at 10 to 30 per second (DockKit's
/// rates): each one after the first is judged on the gap since the one before (more than
/// ``maximumGap``: too slow) and, once a second of them has arrived, on the rate over the last
/// second.
public struct ObservationRateMonitor: Sendable, Equatable {
    public var allowed: ClosedRange<Double>
    private var times: [Double] = []

    public init(allowed: ClosedRange<Double> = 10...30) {
        self.allowed = allowed
    }

    /// A gap longer than this begins a new stream.
    static let pause = 2.0

    /// The longest gap between two observations of a stream: two and a half of the slowest
    /// rate's (0.25 s at 10 a second), so that a late one on a busy machine passes.
    public var maximumGap: Double { 2.5 / allowed.lowerBound }

    /// Records an observation at `time`. Returns whether it is in rate (`false` for the first of
    /// a stream, which has nothing to be judged against: the first of all, or the first after a
    /// pause of more than 2 s); throws ``DockError/rateTooLow(limit:)`` or
    /// ``DockError/rateTooHigh(limit:)`` when it is out of rate. (At one a second every
    /// observation after the first is too slow.)
    @discardableResult
    public mutating func record(at time: Double) throws(DockError) -> Bool {
        // The first of all, or the first after a pause of more than 2 s (a stream begun again):
        // nothing to judge it against.
        guard let last = times.last, time - last <= Self.pause else {
            times = [time]
            return false
        }
        let gap = time - last
        times.append(time)
        times.removeAll { time - $0 > 1 }
        if !(gap <= maximumGap) { throw .rateTooLow(limit: allowed.lowerBound) }
        // The count over the window [time - 1, time] includes both ends: n samples span n-1 gaps.
        guard let first = times.first, time - first >= 0.95 else {
            if Double(times.count) > allowed.upperBound + 1 { throw .rateTooHigh(limit: allowed.upperBound) }
            return true
        }
        let rate = Double(times.count - 1) / (time - first)
        if rate > allowed.upperBound * 1.1 { throw .rateTooHigh(limit: allowed.upperBound) }
        if rate < allowed.lowerBound * 0.9 { throw .rateTooLow(limit: allowed.lowerBound) }
        return true
    }
}
