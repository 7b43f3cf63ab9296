import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A thread that has an owner: named, started by the owner, and joined by it. The owner first
/// makes the body return (a flag it reads, a descriptor it polls that the owner closes, a queue
/// that ends) and then calls ``join()``, which waits for the thread to be gone. An owned thread
/// dropped while it may still run is a bug: the deinit asserts that it was joined (as NIO's
/// thread pool asserts that it was shut down), so that no thread outlives what it works on.
package final class OwnedThread: Sendable {
    /// The thread's name (`ps -L`, debuggers, crash reports: the first 15 bytes).
    package let name: String
    private let thread: pthread_t
    private let joined = Atomic(false)

    /// Starts a thread named `name` that runs `body`.
    package init(named name: String, _ body: @escaping @Sendable () -> Void) {
        self.name = name
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            Thread.current.name = start.name  // the kernel's thread name too (its first 15 bytes)
            start.body()
            return nil
        }, start)
        precondition(status == 0, "cannot start thread \(name): error \(status)")
        self.thread = thread
    }

    /// Starts a thread named `name` that runs `body` with `value`, given to it alone: `sending`
    /// makes the caller give it up (a device, a capture handle), which is what makes handing it
    /// over safe.
    package convenience init<Value>(named name: String, with value: sending Value, _ body: @escaping @Sendable (sending Value) -> Void) {
        let box = Handover(value)
        self.init(named: name) { body(box.take()) }
    }

    /// Starts a thread named `name` that runs `body` with `value`, which the caller no longer
    /// uses until the thread is joined though the compiler cannot tell (the value stays in a
    /// property, read again only after ``join()``: a pipeline's detector, counted by the tests
    /// and the bench). The one place that promise is made; prefer the `sending` form.
    package convenience init<Value>(named name: String, handingOver value: Value, _ body: @escaping @Sendable (Value) -> Void) {
        let box = Unchecked(value)
        self.init(named: name) { body(box.value) }
    }

    /// Waits until the thread has ended. Call it once the body has been told to return; again
    /// is harmless. Called from the thread itself (an owner whose last reference the body held,
    /// released as the body returns), it cannot wait for itself: the thread is ending, and is
    /// detached instead.
    package func join() {
        let (first, _) = joined.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        guard first else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    deinit {
        if !joined.load(ordering: .acquiring) {
            assertionFailure("thread \(name) was never joined: its owner must stop and join it")
            pthread_detach(thread)
        }
    }

    private final class Start: @unchecked Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    private final class Unchecked<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// The value on its way: put in by the caller (who gave it up), taken once by the thread.
    private final class Handover<Value>: @unchecked Sendable {
        private var value: Value?
        init(_ value: sending Value) { self.value = value }
        func take() -> sending Value {
            defer { value = nil }
            return value!
        }
    }
}

/// How an owner tells a thread's body to return: set once, read between waits.
package final class StopRequest: Sendable {
    private let flag = Atomic(false)

    package init() {}

    /// Asks the body to return; whether it had been asked before.
    @discardableResult
    package func request() -> Bool { flag.exchange(true, ordering: .acquiringAndReleasing) }

    package var isRequested: Bool { flag.load(ordering: .acquiring) }
}
