import DockTrack
import Foundation
import Testing

/// The library leaves a program's signals alone: a write to a pipe whose reader went away is an
/// error, not a SIGPIPE, and nothing is left pending or blocked behind it.
@Suite(.onTestThreads) struct SignalsTests {
    static func pipeSignal(in set: sigset_t) -> Bool {
        var set = set
        return sigismember(&set, SIGPIPE) == 1
    }

    @Test func aWriteToAPipeNobodyReadsIsAnErrorAndLeavesNoSignalBehind() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])  // the reader goes away
        defer { close(fds[1]) }
        var before = sigaction()
        sigaction(SIGPIPE, nil, &before)
        var failure: SystemCallError?
        do { try Syscall.writeAll(Array("a line\n".utf8), to: fds[1]) } catch { failure = error }
        #expect(failure?.errno == EPIPE, "\(String(describing: failure))")
        var pending = sigset_t(), mask = sigset_t()
        sigpending(&pending)
        pthread_sigmask(SIG_SETMASK, nil, &mask)
        #expect(!Self.pipeSignal(in: pending), "a SIGPIPE was left pending")
        #expect(!Self.pipeSignal(in: mask), "SIGPIPE was left blocked in this thread")
        var after = sigaction()
        sigaction(SIGPIPE, nil, &after)
        let handler = { (action: sigaction) in unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) }
        #expect(handler(after) == handler(before), "the program's SIGPIPE disposition changed")
    }

    /// A SIGPIPE the program already had pending (blocked) stays pending: only the write's own is taken.
    @Test func aSignalPendingBeforeStaysPending() throws {
        var pipeOnly = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        defer {
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipeOnly, nil, &now)
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        pthread_kill(pthread_self(), SIGPIPE)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        #expect(throws: SystemCallError.self) { try Syscall.writeAll([1], to: fds[1]) }
        var pending = sigset_t()
        sigpending(&pending)
        #expect(Self.pipeSignal(in: pending), "the program's own pending SIGPIPE was taken")
    }
}
