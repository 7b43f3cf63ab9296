import DockTrackCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: which, and its errno.
package struct SystemCallError: Error, Sendable, Equatable, CustomStringConvertible {
    package var call: String
    package var errno: Int32

    package init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    package var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// The one place system calls are retried when a signal interrupts them (EINTR), and their
/// failures typed.
package enum Syscall {
    /// Calls `body` again while it fails with EINTR; returns what it returned last (-1 with
    /// `errno` set on any other failure).
    @inlinable
    package static func retryingEINTR<T: BinaryInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }

    /// `body` retried on EINTR; a failure throws its errno, named `call`.
    @inlinable
    package static func checked<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemCallError) -> T {
        let result = retryingEINTR(body)
        if result == -1 { throw SystemCallError(call, errno: errno) }
        return result
    }

    /// poll(2) on `descriptors` until one is ready or `seconds` have passed on `clock`; an
    /// interruption waits on for the time that is left. The number of ready descriptors (0:
    /// timed out).
    package static func poll(_ descriptors: inout [pollfd], seconds: Double,
                            clock: () -> Double = MonotonicClock.now) throws(SystemCallError) -> Int {
        let deadline = clock() + max(0, seconds)
        let count = nfds_t(descriptors.count)
        return Int(try descriptors.withUnsafeMutableBufferPointer { buffer throws(SystemCallError) in
            try checked("poll") {
                Glibc.poll(buffer.baseAddress, count, Int32((max(0, deadline - clock()) * 1000).rounded(.up)))
            }
        })
    }

    /// Runs `body` (writes to a pipe) with SIGPIPE blocked in this thread: a reader that went
    /// away is an EPIPE error, and the SIGPIPE the write raised is taken back before the mask is
    /// restored. The program's own SIGPIPE disposition is left as it was (a library does not
    /// change a program's signals; sockets send with MSG_NOSIGNAL instead).
    package static func withoutSIGPIPE<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        var pipeOnly = sigset_t(), previous = sigset_t(), pendingBefore = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        sigpending(&pendingBefore)
        let wasPending = sigismember(&pendingBefore, SIGPIPE) == 1
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        defer {
            var pendingNow = sigset_t()
            sigpending(&pendingNow)
            if !wasPending && sigismember(&pendingNow, SIGPIPE) == 1 {
                var now = timespec(tv_sec: 0, tv_nsec: 0)
                _ = retryingEINTR { sigtimedwait(&pipeOnly, nil, &now) }
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return try body()
    }

    /// Writes all of `bytes` to `fd` (`send` with `flags` on a socket, `write` otherwise, as
    /// `socket` says, never raising SIGPIPE); EAGAIN on a blocking descriptor is retried.
    package static func writeAll(_ bytes: [UInt8], to fd: Int32, socketFlags flags: Int32? = nil) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { b in
                retryingEINTR {
                    flags.map { Glibc.send(fd, b.baseAddress, b.count, $0 | Int32(MSG_NOSIGNAL)) }
                        ?? withoutSIGPIPE { Glibc.write(fd, b.baseAddress, b.count) }
                }
            }
            if n < 0 && errno == EAGAIN { continue }
            if n < 0 { throw SystemCallError(flags == nil ? "write" : "send", errno: errno) }
            if n == 0 { throw SystemCallError(flags == nil ? "write" : "send", errno: EPIPE) }
            offset += n
        }
    }
}
