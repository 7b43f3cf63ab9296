import DockTrackCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The lines of a file descriptor (a pipe, a file, stdin), read as they arrive, framed by
/// ``LineFramer``. Reading retries EINTR; the sequence ends at end of file or on a read error.
public struct LineReader: Sequence, IteratorProtocol {
    private let fd: Int32
    private var framer: LineFramer
    private var ended = false
    private var chunk = [UInt8](repeating: 0, count: 65536)

    public init(fileDescriptor fd: Int32, maximumLineLength: Int = LineFramer.defaultMaximumLineLength) {
        self.fd = fd
        framer = LineFramer(maximumLineLength: maximumLineLength)
    }

    public mutating func next() -> LineFramer.Item? {
        while true {
            if let item = framer.next() { return item }
            if ended { return framer.finish() }
            let n = chunk.withUnsafeMutableBytes { buffer in
                Syscall.retryingEINTR { read(fd, buffer.baseAddress, buffer.count) }
            }
            if n <= 0 { ended = true } else { framer.append(chunk[0..<n]) }
        }
    }
}

/// One helper for system calls that may be interrupted by a signal.
