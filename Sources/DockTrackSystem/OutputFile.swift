import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one way DockTrack opens a file it writes (states, traces, plots, docksim's trace, standard
/// output), and the one check every output makes, videos included.
///
/// - Opened in place (`open(2)` with `O_WRONLY|O_CREAT|O_TRUNC`): a symlink is written through, a
///   device or a pipe stays what it is (nothing is written beside the path and renamed over it).
/// - A path that is one of the run's inputs (same device and inode, registered with
///   ``registerInput(_:)``) is refused before anything is opened or truncated.
/// - Every failure is ``CannotWrite``: `cannot write PATH: REASON`, one line.
package final class OutputFile: Sendable {
    /// A file that cannot be opened or written, and why (the system's words).
    package struct CannotWrite: Error, CustomStringConvertible, Equatable, Sendable {
        package var path: String
        package var reason: String
        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
        package var description: String { "cannot write \(path): \(reason)" }
    }

    /// Standard output ("-" as a path): written with write(2), a failure is an error, not a crash.
    package static let standardOutput = OutputFile(descriptor: STDOUT_FILENO, path: "standard output")

    package let path: String
    private let descriptor: Int32
    private let lock = Mutex(false)  // closed

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens `path` for writing in place ("-": ``standardOutput``).
    package static func open(_ path: String) throws(CannotWrite) -> OutputFile {
        if path == "-" { return standardOutput }
        try refuseInput(path)
        let fd = Syscall.retryingEINTR { Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
        guard fd >= 0 else { throw CannotWrite(path: path, reason: Self.reason(errno)) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            Glibc.close(fd)
            throw CannotWrite(path: path, reason: "it is a folder")
        }
        return OutputFile(descriptor: fd, path: path)
    }

    deinit { close() }

    /// Writes all of `bytes`.
    package func write(_ bytes: [UInt8]) throws(CannotWrite) {
        do {
            try lock.withLock { (closed: inout Bool) throws(SystemCallError) in
                guard !closed else { throw SystemCallError("write", errno: EBADF) }
                try Syscall.writeAll(bytes, to: descriptor)
            }
        } catch {
            throw CannotWrite(path: path, reason: Self.reason(error.errno))
        }
    }

    /// Writes `line` and a newline.
    package func write(line: String) throws(CannotWrite) {
        try write(Array((line + "\n").utf8))
    }

    /// Closes the file (standard output stays open); later writes fail.
    package func close() {
        lock.withLock { closed in
            guard !closed else { return }
            closed = true
            if descriptor > STDERR_FILENO { Glibc.close(descriptor) }
        }
    }

    // MARK: - The run's inputs

    /// A file by identity: the same file under any name (a symlink, a hard link, `./x`).
    private struct FileIdentity: Hashable {
        var device: UInt
        var inode: UInt
    }

    private static let inputs = Mutex<[FileIdentity: String]>([:])

    private static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        // Devices (a camera, /dev/null) are never "the same file" as an output: writing states
        // to /dev/null while reading /dev/null is harmless.
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileIdentity(device: UInt(info.st_dev), inode: UInt(info.st_ino))
    }

    /// Remembers `path` (when it is a file) as an input of this run: no output may be written
    /// over it.
    package static func registerInput(_ path: String) {
        guard path != "-", let identity = identity(of: path) else { return }
        inputs.withLock { $0[identity] = path }
    }

    /// Throws when `path` is a registered input (for outputs opened elsewhere, such as by a
    /// video encoder).
    package static func refuseInput(_ path: String) throws(CannotWrite) {
        guard path != "-", let identity = identity(of: path) else { return }
        if let input = inputs.withLock({ $0[identity] }) {
            throw CannotWrite(path: path, reason: input == path ? "it is this run's input" : "it is this run's input \(input)")
        }
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
