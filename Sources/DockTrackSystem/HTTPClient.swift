import DockTrackCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP request over a TCP connection of its own, with a deadline and a budget: the whole
/// exchange (connecting, sending, reading the reply) ends within `timeout` seconds, and a reply
/// over `maximumBytes` is abandoned as soon as it is seen to be (``HTTPReplyParser``). Nothing is
/// left running after it returns: the connection is closed, no download goes on.
///
/// Plain `http://` only (what ONVIF cameras serve on a LAN).
package enum HTTPClient {
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// No connection (refused, unreachable, a name that does not resolve).
        case unreachable(String)
        /// No whole reply within the time allowed.
        case timedOut(seconds: Double)
        case reply(HTTPReplyParser.Failure)
        case unsupported(String)

        package var description: String {
            switch self {
            case .unreachable(let why): "no connection (\(why))"
            case .timedOut(let seconds): "no whole reply within \(seconds) s"
            case .reply(let failure): failure.description
            case .unsupported(let what): what
            }
        }
    }

    /// Sends `method` to `url` with `headers` and `body`; the reply within `timeout` seconds and
    /// `maximumBytes` bytes.
    package static func send(_ method: String, to url: URL, headers: [(String, String)] = [], body: [UInt8] = [],
                            timeout: Double, maximumBytes: Int,
                            clock: () -> Double = MonotonicClock.now) throws(Failure) -> HTTPReplyParser.Reply {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else {
            throw .unsupported("\(url): only http:// URLs are supported")
        }
        let deadline = clock() + max(0, timeout)
        let port = url.port ?? 80
        let fd = try connect(host: host, port: port, deadline: deadline, clock: clock)
        defer { close(fd) }
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers {
            // A header is one line: no peer-chosen text may start another.
            let clean = value.filter { $0 != "\r" && $0 != "\n" }
            head += "\(name): \(clean)\r\n"
        }
        head += "\r\n"
        try sendAll(Array(head.utf8) + body, to: fd, deadline: deadline, clock: clock)
        var parser = HTTPReplyParser(maximumBytes: maximumBytes)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            try wait(fd, for: Int16(POLLIN), deadline: deadline, clock: clock, seconds: timeout)
            let n = chunk.withUnsafeMutableBytes { raw in Syscall.retryingEINTR { recv(fd, raw.baseAddress, raw.count, 0) } }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .unreachable(String(cString: strerror(errno)))
            }
            do {
                if n == 0 { return try parser.finish() }
                if try parser.append(chunk[..<n]) { return parser.reply! }
            } catch {
                throw .reply(error)
            }
        }
    }

    /// Waits until `fd` is ready for `events` or the deadline passes.
    private static func wait(_ fd: Int32, for events: Int16, deadline: Double, clock: () -> Double, seconds: Double) throws(Failure) {
        let left = deadline - clock()
        guard left > 0 else { throw .timedOut(seconds: seconds) }
        var fds = [pollfd(fd: fd, events: events, revents: 0)]
        let ready: Int
        do { ready = try Syscall.poll(&fds, seconds: left, clock: clock) } catch { throw .unreachable("\(error)") }
        if ready == 0 { throw .timedOut(seconds: seconds) }
    }

    private static func sendAll(_ bytes: [UInt8], to fd: Int32, deadline: Double, clock: () -> Double) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            try wait(fd, for: Int16(POLLOUT), deadline: deadline, clock: clock, seconds: deadline - clock())
            let n = bytes[offset...].withUnsafeBytes { raw in
                Syscall.retryingEINTR { Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)) }
            }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .unreachable(String(cString: strerror(errno)))
            }
            offset += n
        }
    }

    /// A non-blocking TCP connection to `host`:`port`, made before the deadline.
    private static func connect(host: String, port: Int, deadline: Double, clock: () -> Double) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        let trimmed = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(trimmed, String(port), &hints, &found)
        guard status == 0, let first = found else { throw .unreachable("\(host): \(String(cString: gai_strerror(status)))") }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                close(fd)
                continue
            }
            do {
                try wait(fd, for: Int16(POLLOUT), deadline: deadline, clock: clock, seconds: deadline - clock())
            } catch {
                close(fd)
                throw error
            }
            var problem: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &problem, &length)
            if problem == 0 { return fd }
            lastError = String(cString: strerror(problem))
            close(fd)
        }
        throw .unreachable(lastError)
    }
}
