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

/// Checks that observations fed for custom tracking arrive at 10 to 30 per second, judged over
/// the last second once a second of them has arrived.
public struct ObservationRateMonitor: Sendable, Equatable {
    public var allowed: ClosedRange<Double>
    private var times: [Double] = []

    public init(allowed: ClosedRange<Double> = 10...30) {
        self.allowed = allowed
    }

    /// Records an observation at `time`; throws when the rate over the last second is outside
    /// the allowed range (a gap longer than 1 s counts as too slow at once).
    public mutating func record(at time: Double) throws(DockError) {
        if let last = times.last, time - last > 1 {
            times = [time]
            throw .rateTooLow(limit: allowed.lowerBound)
        }
        times.append(time)
        times.removeAll { time - $0 > 1 }
        // The count over the window [time - 1, time] includes both ends: n samples span n-1 gaps.
        guard let first = times.first, time - first >= 0.95 else {
            if Double(times.count) > allowed.upperBound + 1 { throw .rateTooHigh(limit: allowed.upperBound) }
            return
        }
        let rate = Double(times.count - 1) / (time - first)
        if rate > allowed.upperBound * 1.1 { throw .rateTooHigh(limit: allowed.upperBound) }
        if rate < allowed.lowerBound * 0.9 { throw .rateTooLow(limit: allowed.lowerBound) }
    }
}
