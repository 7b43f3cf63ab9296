import Foundation

/// One value handed from threads that make it to the thread that uses it, the newest winning:
/// ``put(_:)`` replaces a value still waiting (and counts it), ``take(timeout:)`` waits for one.
/// The one such hand-off (a camera's newest frame, the detection thread's next frame); closing
/// it wakes the taker for good.
public final class NewestValue<Value: Sendable>: @unchecked Sendable {
    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: Value?
    private var isClosed = false
    private var replaced = 0

    public init() {}

    /// Hands `value` over; replaces one still waiting. Ignored once closed.
    public func put(_ value: Value) {
        condition.withLock {
            guard !isClosed else { return }
            if waiting != nil { replaced += 1 }
            waiting = value
            condition.signal()
        }
    }

    /// The value waiting, once there is one; `nil` when closed, or after `timeout` seconds.
    public func take(timeout: Double? = nil) -> Value? {
        condition.withLock {
            let deadline = timeout.map { Date(timeIntervalSinceNow: max(0, $0)) }
            while waiting == nil && !isClosed {
                if let deadline {
                    if !condition.wait(until: deadline) { break }
                } else {
                    condition.wait()
                }
            }
            guard !isClosed else { return nil }
            defer { waiting = nil }
            return waiting
        }
    }

    /// Whether a value is waiting.
    public var hasValue: Bool { condition.withLock { waiting != nil } }

    /// Values replaced by newer ones before they were taken.
    public var replacedCount: Int { condition.withLock { replaced } }

    /// Wakes the taker and refuses further values.
    public func close() {
        condition.withLock {
            isClosed = true
            waiting = nil
            condition.broadcast()
        }
    }
}
