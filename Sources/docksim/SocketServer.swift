import DockTrack
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Serves the dock protocol on a Unix socket with poll(2), on the real (monotonic) clock.
/// One client holds the session at a time (one session per protocol per dock); another
/// client's hello is refused with an error and its connection closed.
struct SocketServer {
    let path: String
    var session: DockSession
    let trace: FileHandle?
    let stateInterval: Double
    let duration: Double?

    init(path: String, session: DockSession, trace: FileHandle?, stateInterval: Double, duration: Double?) {
        self.path = path
        self.session = session
        self.trace = trace
        self.stateInterval = stateInterval
        self.duration = duration
    }

    struct Client {
        let fd: Int32
        var buffer = Data()
    }

    mutating func serve() throws {
        let listener = try listen()
        defer { close(listener); unlink(path) }
        FileHandle.standardError.write(Data("docksim: serving \(DockSession.protocolName) on \(path)\n".utf8))
        // The simulation's clock (and the script's) starts when the first client connects, so
        // scripted events are not played to nobody; --duration counts from the start.
        let launched = ContinuousClock.now
        var start: ContinuousClock.Instant?
        var clients: [Client] = []
        var owner: Int32?  // the client holding the session
        var nextState = 0.0
        func seconds(since instant: ContinuousClock.Instant) -> Double {
            let d = ContinuousClock.now - instant
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
        func now() -> Double { start.map(seconds(since:)) ?? 0 }
        while duration.map({ seconds(since: launched) < $0 }) ?? true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)] + clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 20)
            if ready < 0 && errno != EINTR { throw SocketError("poll failed: \(String(cString: strerror(errno)))") }
            let t = now()
            // Scripted events and the motion-state stream go to the session's owner.
            for line in session.advance(to: t) {
                for client in clients where client.fd == owner || !line.contains("\"motionState\"") { send(line, to: client.fd) }
                if line.contains(#""event":"undocked""#) { owner = nil }
            }
            if let owner, t >= nextState {
                send(session.motionStateLine(), to: owner)
                nextState = t + stateInterval
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let fd = accept(listener, nil, nil)
                if fd >= 0 {
                    clients.append(Client(fd: fd))
                    if start == nil { start = ContinuousClock.now }
                }
            }
            var closed: Set<Int32> = []
            for (i, pfd) in fds.enumerated().dropFirst() where pfd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                var bytes = [UInt8](repeating: 0, count: 4096)
                let n = read(pfd.fd, &bytes, bytes.count)
                if n <= 0 { closed.insert(pfd.fd); continue }
                clients[i - 1].buffer.append(contentsOf: bytes[0..<n])
                while let newline = clients[i - 1].buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: clients[i - 1].buffer[clients[i - 1].buffer.startIndex..<newline], as: UTF8.self)
                    clients[i - 1].buffer.removeSubrange(clients[i - 1].buffer.startIndex...newline)
                    let fd = pfd.fd
                    if let holder = owner, holder != fd, line.contains("\"hello\"") || line.contains("\"command\"") {
                        send(#"{"type":"error","code":"invalidRequest","message":"a session for \#(DockSession.protocolName) is already open on this dock"}"#, to: fd)
                        closed.insert(fd)
                        break
                    }
                    let replies = session.handle(line, at: now())
                    if owner == nil, session.hasSession { owner = fd }
                    for reply in replies { send(reply, to: fd) }
                    writeTrace(trace, session)
                }
            }
            for fd in closed {
                close(fd)
                if owner == fd {
                    owner = nil
                    _ = session.handle(DockCommand.setAngularVelocity(.zero).jsonLine(time: now()), at: now())
                }
            }
            clients.removeAll { closed.contains($0.fd) }
        }
        for client in clients { close(client.fd) }
    }

    private func send(_ line: String, to fd: Int32) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    private func listen() throws -> Int32 {
        unlink(path)
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError("socket failed: \(String(cString: strerror(errno)))") }
        var address: sockaddr_un
        do { address = try UnixSocket.address(path) } catch { close(fd); throw SocketError("\(error)") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { close(fd); throw SocketError("\(path): cannot bind: \(String(cString: strerror(errno)))") }
        guard Glibc.listen(fd, 8) == 0 else { close(fd); throw SocketError("listen failed: \(String(cString: strerror(errno)))") }
        return fd
    }
}

struct SocketError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
