import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A named pipe (FIFO) given as input. Opening its read end blocks until a writer comes, and a
/// signal does not end that wait (the open is restarted): a run given one used to wait forever
/// without a word, deaf to SIGINT and SIGTERM. It is opened without blocking instead, and polled.
package enum NamedPipeInput {
    /// Why no writer came.
    package struct NoWriter: Error {
        package var reason: String
    }

    /// The line a run prints while it waits.
    package static func waitingNotice(_ path: String) -> String { "\(path) is a FIFO: waiting for a writer (Ctrl-C stops)" }

    /// How a reader says it waits, by default: a line on standard error.
    package static func tellOnStandardError(_ line: String) {
        FileHandle.standardError.write(Data("docktrack: \(line)\n".utf8))
    }

    /// For a FIFO at `path`: tells `waiting` once, waits for a writer (``awaitWriter(_:stopping:)``)
    /// and returns the read end it held open, for the caller to close once its decoder has
    /// opened the path. `nil` for anything that is not a FIFO (nothing waited for).
    package static func heldForWriter(_ path: String, waiting: (String) -> Void, stopping: () -> Bool) throws(NoWriter) -> Int32? {
        guard isNamedPipe(path) else { return nil }
        waiting(waitingNotice(path))
        return try awaitWriter(path, stopping: stopping)
    }

    package static func isNamedPipe(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
    }

    /// Waits until a writer has sent something into the FIFO at `path`, looking at `stopping`
    /// every 0.2 s; the read end it held open meanwhile, for the caller to close once the
    /// decoder has opened the path.
    package static func awaitWriter(_ path: String, stopping: () -> Bool) throws(NoWriter) -> Int32 {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw NoWriter(reason: String(cString: strerror(errno))) }
        var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            if stopping() {
                close(fd)
                throw NoWriter(reason: "stopped while waiting for a writer on the FIFO")
            }
            waiting.revents = 0
            guard poll(&waiting, 1, 200) > 0 else { continue }
            if waiting.revents & Int16(POLLIN) != 0 { return fd }
            close(fd)
            throw NoWriter(reason: "the FIFO's writer closed it without sending anything")
        }
    }
}
