import Foundation

/// State that threads share and wait on: a value behind one lock, with a condition to wait for
/// it to change (`Synchronization.Mutex` has no waiting). Every ``withLock(_:)`` wakes the
/// waiters after it, so a waiter's test sees each change.
///
/// With ``OwnedThread``'s hand-over the one `@unchecked Sendable` that workers are built on: the
/// state is reached only inside the lock of `condition`.
package final class Monitor<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    package init(_ state: State) { self.state = state }

    /// Runs `body` on the state under the lock, then wakes the waiters.
    package func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits until `ready` says so of the state (tested under the lock, after each change) or
    /// `deadline` passes (`nil`: no deadline), then runs `body` under the same lock, told
    /// whether the state is ready, and wakes the waiters.
    package func withLock<Result, Failure: Error>(waitingFor ready: (State) -> Bool, until deadline: Date? = nil,
                                                 _ body: (inout State, _ ready: Bool) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        var isReady = ready(state)
        while !isReady {
            if let deadline {
                guard condition.wait(until: deadline) else { break }
            } else {
                condition.wait()
            }
            isReady = ready(state)
        }
        return try body(&state, isReady)
    }

    /// Waits until `ready` (or `deadline`); whether it became so.
    @discardableResult
    package func wait(for ready: (State) -> Bool, until deadline: Date? = nil) -> Bool {
        withLock(waitingFor: ready, until: deadline) { _, isReady in isReady }
    }
}
