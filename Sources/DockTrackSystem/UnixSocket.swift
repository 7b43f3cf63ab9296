import DockTrackCore
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Unix-domain stream sockets: the one place their addresses are built.
package enum UnixSocket {
    /// The address of the socket at `path`; throws when the path is too long for one.
    package static func address(_ path: String) throws(DockError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .invalidRequest("\(path): socket path longer than \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        return address
    }

    /// A stream socket connected to `path`. Close-on-exec: a process the caller starts must not
    /// hold a copy of the connection, which would keep it open after the caller closes it.
    package static func connect(to path: String) throws(DockError) -> Int32 {
        var address = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .notConnected }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { close(fd); throw .notConnected }
        return fd
    }
}

/// Lines written whole to a socket, one writer at a time.
package final class SocketLineWriter: Sendable {
    private let fd: Int32
    private let writing = Mutex(())

    package init(fd: Int32) { self.fd = fd }

    /// Writes `line` and a newline; `false` when the peer is gone.
    @discardableResult
    package func write(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        return writing.withLock { _ in (try? Syscall.writeAll(bytes, to: fd, socketFlags: Int32(MSG_NOSIGNAL))) != nil }
    }
}
