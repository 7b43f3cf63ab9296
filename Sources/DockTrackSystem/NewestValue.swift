import Foundation

/// One value handed from threads that make it to the thread that uses it, the newest winning:
/// ``put(_:)`` replaces a value still waiting (and counts it), ``take(timeout:)`` waits for one.
/// The one such hand-off (a camera's newest frame, the detection thread's next frame); closing
/// it wakes the taker for good.
package final class NewestValue<Value: Sendable>: Sendable {
    private struct Slot {
        var waiting: Value?
        var isClosed = false
        var replaced = 0
    }
    private let slot = Monitor(Slot())

    package init() {}

    /// Hands `value` over; replaces one still waiting. Ignored once closed.
    package func put(_ value: Value) {
        slot.withLock { slot in
            guard !slot.isClosed else { return }
            if slot.waiting != nil { slot.replaced += 1 }
            slot.waiting = value
        }
    }

    /// The value waiting, once there is one; `nil` when closed, or after `timeout` seconds.
    package func take(timeout: Double? = nil) -> Value? {
        slot.withLock(waitingFor: { $0.waiting != nil || $0.isClosed },
                      until: timeout.map { Date(timeIntervalSinceNow: max(0, $0)) }) { slot, _ in
            guard !slot.isClosed else { return nil }
            defer { slot.waiting = nil }
            return slot.waiting
        }
    }

    /// Whether a value is waiting.
    package var hasValue: Bool { slot.withLock { $0.waiting != nil } }

    /// Values replaced by newer ones before they were taken.
    package var replacedCount: Int { slot.withLock { $0.replaced } }

    /// Wakes the taker and refuses further values.
    package func close() {
        slot.withLock { slot in
            slot.isClosed = true
            slot.waiting = nil
        }
    }
}
