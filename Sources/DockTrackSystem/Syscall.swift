import DockTrackCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: which, and its errno.
public struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// The one place system calls are retried when a signal interrupts them (EINTR), and their
/// failures typed.
public enum Syscall {
    /// Calls `body` again while it fails with EINTR; returns what it returned last (-1 with
    /// `errno` set on any other failure).
    @inlinable
    public static func retryingEINTR<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }

    /// `body` retried on EINTR; a failure throws its errno, named `call`.
    @inlinable
    public static func checked<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
        let result = retryingEINTR(body)
        if result == -1 { throw SystemCallError(call, errno: errno) }
        return result
    }

    /// poll(2) on `descriptors` until one is ready or `seconds` have passed on `clock`; an
    /// interruption waits on for the time that is left. The number of ready descriptors (0:
    /// timed out).
    public static func poll(_ descriptors: inout [pollfd], seconds: Double,
                            clock: () -> Double = MonotonicClock.now) throws(SystemCallError) -> Int {
        let deadline = clock() + max(0, seconds)
        let count = nfds_t(descriptors.count)
        return Int(try descriptors.withUnsafeMutableBufferPointer { buffer throws(SystemCallError) in
            try checked("poll") {
                Glibc.poll(buffer.baseAddress, count, Int32((max(0, deadline - clock()) * 1000).rounded(.up)))
            }
        })
    }

    /// Writes all of `bytes` to `fd` (`send` with `flags` on a socket, `write` otherwise, as
    /// `socket` says); EAGAIN on a blocking descriptor is retried.
    public static func writeAll(_ bytes: [UInt8], to fd: Int32, socketFlags flags: Int32? = nil) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { b in
                retryingEINTR { flags.map { Glibc.send(fd, b.baseAddress, b.count, $0) } ?? Glibc.write(fd, b.baseAddress, b.count) }
            }
            if n < 0 && errno == EAGAIN { continue }
            if n < 0 { throw SystemCallError(flags == nil ? "write" : "send", errno: errno) }
            if n == 0 { throw SystemCallError(flags == nil ? "write" : "send", errno: EPIPE) }
            offset += n
        }
    }
}
