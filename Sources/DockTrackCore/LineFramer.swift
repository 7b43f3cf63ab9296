import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Splits a byte stream into lines: the one place where JSON Lines are framed (dock protocol on
/// a pipe or a socket, the client side, observations for custom tracking).
///
/// Linear in the bytes it is given, however they are cut into chunks; a line longer than
/// ``maximumLineLength`` is not kept: it comes out once as ``Item/tooLong(bytes:)`` and its
/// bytes up to the next newline are dropped as they arrive, so memory stays bounded.
package struct LineFramer: Sendable {
    /// What the framer hands out.
    package enum Item: Sendable, Equatable {
        /// One line, without its newline (a trailing `\r` is kept; JSON ignores it).
        case line(String)
        /// A line longer than the maximum, dropped; `bytes` is how much of it was seen when it
        /// was given up (at least the maximum plus one).
        case tooLong(bytes: Int)
    }

    /// 1 MiB: a line of the dock protocol or of observations is a few hundred bytes.
    package static let defaultMaximumLineLength = 1 << 20

    package let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts.
    private var start = 0
    /// How far past `start` the buffer is known to hold no newline.
    private var scanned = 0
    /// Dropping the rest of an over-long line until its newline.
    private var discarding = false

    package init(maximumLineLength: Int = LineFramer.defaultMaximumLineLength) {
        self.maximumLineLength = max(1, maximumLineLength)
    }

    /// Bytes held for a line not yet complete.
    package var pendingByteCount: Int { buffer.count - start }

    /// Takes the next chunk of the stream.
    package mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line (or over-long line) in what was given, or nil until more comes.
    package mutating func next() -> Item? {
        while true {
            let from = start + scanned
            if let newline = buffer[from...].firstIndex(of: 0x0A) {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = 0
                if discarding {
                    discarding = false
                    continue
                }
                if line.count > maximumLineLength { return .tooLong(bytes: line.count) }
                return .line(String(decoding: line, as: UTF8.self))
            }
            scanned = buffer.count - start
            guard scanned > maximumLineLength || (discarding && scanned > 0) else { return nil }
            // No newline in more than the maximum: give the line up now and drop its bytes.
            let seen = scanned
            buffer.removeAll(keepingCapacity: false)
            start = 0
            scanned = 0
            if discarding { return nil }
            discarding = true
            return .tooLong(bytes: seen)
        }
    }

    /// At the end of the stream: the last line when it had no newline.
    package mutating func finish() -> Item? {
        defer {
            buffer.removeAll()
            start = 0
            scanned = 0
            discarding = false
        }
        guard !discarding, buffer.count > start else { return nil }
        let rest = buffer[start...]
        if rest.count > maximumLineLength { return .tooLong(bytes: rest.count) }
        return .line(String(decoding: rest, as: UTF8.self))
    }
}
