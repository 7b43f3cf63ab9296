import Synchronization

/// Values told to every reader, each reader on a stream of its own from the moment it asks
/// (DockKit's streams): two `for await` loops over the same property each see every value, and a
/// reader that comes late starts from the current values (a state's), never from old history.
/// A reader that falls behind keeps only the newest `buffered` values.
final class Broadcast<Element: Sendable>: Sendable {
    private struct Readers {
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
        var next = 0
        /// What a new reader gets first (a state stream's current values; none for events).
        var current: [Element] = []
        var finished = false
    }
    private let readers = Mutex(Readers())
    private let buffered: Int

    init(buffered: Int) { self.buffered = buffered }

    /// A new reader's stream: the current values, then each value told from now on; finished
    /// when the broadcast is.
    func stream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(buffered))
        let id: Int? = readers.withLock { readers in
            for value in readers.current { continuation.yield(value) }
            guard !readers.finished else { return nil }
            let id = readers.next
            readers.next += 1
            readers.continuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.readers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Tells every reader `value`; `current`, when given, is what a reader who comes later
    /// starts from (the state as of this value).
    func yield(_ value: Element, current: [Element]? = nil) {
        let continuations = readers.withLock { readers in
            if let current { readers.current = current }
            return Array(readers.continuations.values)
        }
        for continuation in continuations { continuation.yield(value) }
    }

    /// Ends every reader's stream, and the streams of readers who come later (after `last`
    /// when given: what a late reader reads before the end).
    func finish(last: Element? = nil) {
        let continuations = readers.withLock { readers in
            readers.finished = true
            readers.current = last.map { [$0] } ?? []
            defer { readers.continuations = [:] }
            return Array(readers.continuations.values)
        }
        for continuation in continuations {
            if let last { continuation.yield(last) }
            continuation.finish()
        }
    }
}
