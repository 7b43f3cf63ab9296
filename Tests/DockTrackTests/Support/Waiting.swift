import Foundation

/// Waits while `condition` holds, looking again every `interval`, for at most `limit`; whether it
/// stopped holding. The limit is a generous deadline, not a measurement: on a busy machine the
/// wait takes longer, and a test fails only when the condition never changes.
@discardableResult
func waitWhile(atMost limit: Duration = .seconds(10), every interval: Duration = .milliseconds(25),
               _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while try condition() {
        if ContinuousClock.now >= deadline { return false }
        Thread.sleep(forTimeInterval: Double(interval.components.seconds) + Double(interval.components.attoseconds) * 1e-18)
    }
    return true
}

/// ``waitWhile(atMost:every:_:)`` for a condition that is awaited.
@discardableResult
func awaitWhile(atMost limit: Duration = .seconds(10), every interval: Duration = .milliseconds(25),
                _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while try await condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// ``waitWhile(atMost:every:_:)`` up to a wall-clock `deadline` set earlier in a test.
@discardableResult
func waitWhile(until deadline: Date, every interval: Duration = .milliseconds(25), _ condition: () throws -> Bool) rethrows -> Bool {
    try waitWhile(atMost: .milliseconds(max(0, Int64(deadline.timeIntervalSinceNow * 1000))), every: interval, condition)
}
