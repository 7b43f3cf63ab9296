import DockTrackCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The lines of a file descriptor (a pipe, a file, stdin), read as they arrive, framed by
/// ``LineFramer``. Reading retries EINTR; the sequence ends at end of file or on a read error,
/// and, when a `stopped` check is given, once it says so (the input is waited on in steps of
/// 0.1 s, so a stop asked for by a signal ends a run blocked on a silent pipe).
package struct LineReader: Sequence, IteratorProtocol {
    private let fd: Int32
    private var framer: LineFramer
    private var ended = false
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private let stopped: (() -> Bool)?

    package init(fileDescriptor fd: Int32, maximumLineLength: Int = LineFramer.defaultMaximumLineLength,
                stopped: (() -> Bool)? = nil) {
        self.fd = fd
        self.stopped = stopped
        framer = LineFramer(maximumLineLength: maximumLineLength)
    }

    package mutating func next() -> LineFramer.Item? {
        while true {
            if let stopped, stopped() { return nil }
            if let item = framer.next() { return item }
            if ended { return framer.finish() }
            if stopped != nil {
                var waiting = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
                // Readable, at its end, or in error: the read below says which.
                guard (try? Syscall.poll(&waiting, seconds: 0.1)) != 0 else { continue }
            }
            let n = chunk.withUnsafeMutableBytes { buffer in
                Syscall.retryingEINTR { read(fd, buffer.baseAddress, buffer.count) }
            }
            if n <= 0 { ended = true } else { framer.append(chunk[0..<n]) }
        }
    }
}

/// One helper for system calls that may be interrupted by a signal.
