import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small text file given by a user (labels, a token, a setup, a calibration, a result line),
/// read with the real reason when it cannot be: missing, a folder, a FIFO or a device (not
/// waited on), not readable, too large, not UTF-8 text. A FIFO read as a file used to hang, and
/// a binary file or a folder used to be reported as "no such file".
package enum SmallTextFile {
    package struct Unreadable: Error, Equatable, CustomStringConvertible {
        /// The reason alone ("no such file", "a directory, not a file", ...).
        package var reason: String
        package var description: String { reason }
        package init(reason: String) { self.reason = reason }
    }

    /// The text of the regular file at `path`, of at most `largest` bytes.
    package static func read(_ path: String, largest: Int) throws(Unreadable) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Unreadable(reason: errno == ENOENT || errno == ENOTDIR ? "no such file" : String(cString: strerror(errno)))
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Unreadable(reason: "a directory, not a file")
        case S_IFIFO: throw Unreadable(reason: "a FIFO (named pipe), not a file")
        default: throw Unreadable(reason: "a device or socket, not a file")
        }
        guard Int(info.st_size) <= largest else { throw Unreadable(reason: "larger than \(largest) bytes") }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Unreadable(reason: errno == EACCES ? "permission denied" : String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= largest {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Unreadable(reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            bytes += chunk.prefix(count)
        }
        guard bytes.count <= largest else { throw Unreadable(reason: "larger than \(largest) bytes") }
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw Unreadable(reason: "not text (binary or not UTF-8)")
        }
        return text
    }
}
