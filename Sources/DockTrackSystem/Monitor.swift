import Foundation

/// State that threads share and wait on: a value behind one lock, with a condition to wait for
/// it to change (`Synchronization.Mutex` has no waiting). Every ``withLock(_:)`` wakes the
/// waiters after it, so a waiter's test sees each change.
///
/// With ``ThreadHandoff`` the one `@unchecked Sendable` that workers are built on: the state is
/// reached only inside the lock of `condition`.
public final class Monitor<State>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    public init(_ state: State) { self.state = state }

    /// Runs `body` on the state under the lock, then wakes the waiters.
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
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
    public func withLock<Result, Failure: Error>(waitingFor ready: (State) -> Bool, until deadline: Date? = nil,
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
    public func wait(for ready: (State) -> Bool, until deadline: Date? = nil) -> Bool {
        withLock(waitingFor: ready, until: deadline) { _, isReady in isReady }
    }
}

/// A value given to a thread of its own, which alone uses it from then on: a device, a capture
/// handle, a detector. `sending` makes the caller give it up (the compiler checks that nothing
/// else keeps it), which is what makes handing it over safe.
public enum ThreadHandoff {
    /// Starts a thread named `name` that runs `body` with `value`.
    public static func start<Value>(named name: String, with value: sending Value,
                                    _ body: @escaping @Sendable (sending Value) -> Void) {
        let box = Box(value)
        let thread = Thread { body(box.take()) }
        thread.name = name
        thread.start()
    }

    /// Starts a thread named `name` that runs `body` with `value`, which the caller no longer
    /// uses from then on though the compiler cannot tell (the value stays in a property, read
    /// again only once the thread has ended: a pipeline's detector, counted by the tests and
    /// the bench). The one place that promise is made; prefer the `sending` form.
    public static func start<Value>(named name: String, handingOver value: Value, _ body: @escaping @Sendable (Value) -> Void) {
        let box = Unchecked(value)
        let thread = Thread { body(box.value) }
        thread.name = name
        thread.start()
    }

    private final class Unchecked<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The value on its way: put in by the caller (who gave it up), taken once by the thread.
    private final class Box<Value>: @unchecked Sendable {
        private var value: Value?
        init(_ value: sending Value) { self.value = value }
        func take() -> sending Value {
            defer { value = nil }
            return value!
        }
    }
}
