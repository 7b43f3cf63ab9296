import DockTrackCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The listening Unix socket at a path, made without harming what is there: a path that holds
/// anything but a socket is refused, a socket that a live server answers on is refused, and a
/// stale one (nobody listening) is replaced. On the way out the path is removed only if it is
/// still this server's socket.
package struct ListeningSocket: Sendable {
    package let fd: Int32
    package let path: String
    private let device: UInt64
    private let inode: UInt64

    package init(path: String) throws(SocketError) {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw SocketError("\(path) exists and is not a socket; not replacing it")
            }
            if let live = try? UnixSocket.connect(to: path) {
                close(live)
                throw SocketError("\(path): another server is already serving this socket")
            }
            unlink(path)  // stale: nobody listens on it
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket failed: \(String(cString: strerror(errno)))") }
        // Bound and listening under a staging name first, then linked to `path`: the path
        // appears only once connections are taken (a client that sees it and connects at once
        // was refused in the moment between bind and listen), and link fails rather than
        // replace a socket another server published meanwhile.
        let directory = (path as NSString).deletingLastPathComponent
        let staging = (directory.isEmpty ? "" : directory + "/") + ".\((path as NSString).lastPathComponent).\(getpid()).staging"
        let boundPath = (try? UnixSocket.address(staging)) != nil ? staging : path
        var address: sockaddr_un
        do { address = try UnixSocket.address(boundPath) } catch { close(fd); throw SocketError("\(error)") }
        unlink(staging)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { close(fd); throw SocketError("\(path): cannot bind: \(String(cString: strerror(errno)))") }
        guard listen(fd, 16) == 0 else { close(fd); unlink(boundPath); throw SocketError("listen failed: \(String(cString: strerror(errno)))") }
        if boundPath == staging {
            let linked = link(staging, path)
            let failure = errno
            unlink(staging)
            guard linked == 0 else {
                close(fd)
                throw SocketError(failure == EEXIST ? "\(path): another server is already serving this socket"
                                                    : "\(path): cannot publish the socket: \(String(cString: strerror(failure)))")
            }
        }
        guard lstat(path, &info) == 0 else { close(fd); throw SocketError("\(path): vanished after bind") }
        self.fd = fd
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// Closes the socket and removes its path, if the path is still this socket.
    package func remove() {
        close(fd)
        var info = stat()
        if lstat(path, &info) == 0, UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode { unlink(path) }
    }
}

/// Why a socket could not be served, in one line.
package struct SocketError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
