import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Serves the dock protocol on a Unix socket with poll(2), on the real (monotonic) clock, for
/// an endpoint: a dock (``DockSession``) or a tracker in front of one (``DockEndpoint``).
/// One client holds the session at a time (one session per protocol per dock); another
/// client's request is refused with an error and its connection closed.
///
/// Nothing a client does stops the others: sockets are non-blocking, every client has its own
/// output buffer written as the client reads, a client more than ``maximumPendingOutput``
/// bytes behind is dropped with a log line, a hung-up client is closed (never a SIGPIPE), and
/// lines are framed in linear time with a maximum length.
package struct DockSocketServer<Endpoint: DockEndpoint> {
    package let path: String
    package private(set) var session: Endpoint
    let trace: OutputFile?
    let stateInterval: Double
    let duration: Double?
    /// Where the server's log lines go (docksim: stderr).
    let log: @Sendable (String) -> Void
    /// A client this far behind in reading its replies and motion states is dropped.
    package var maximumPendingOutput = 1 << 20
    /// Connections beyond this many are told so and closed.
    package var maximumClients = 64
    /// A connection that has sent no whole line this many seconds after connecting is closed:
    /// idle peers cannot hold the connection slots (64 silent ones locked every client out).
    package var silenceAllowed = 5.0
    /// With every slot taken, a new connection takes the place of the one that has been silent
    /// longest, once it has been silent this many seconds (a real client says hello at once):
    /// 64 silent peers that reconnected as soon as they were closed kept every client out.
    package var silenceBeforeMakingRoom = 1.0
    /// A client without the session that sends this many lines that are not requests is closed
    /// (each is answered with an error first; the session's owner is only answered).
    package var malformedAllowed = 8
    /// Lines a second a client without the session may send (and twice as many at once): beyond
    /// that its lines wait in its own buffer and its socket is not read, so a flooder slows only
    /// itself (the owner is never held back).
    package var linesPerSecondAllowed = 20.0
    /// Bytes of input held for a client without the session: it is not read while it has this
    /// much waiting, and is closed when that much holds no whole line (a request is a few
    /// hundred bytes; the owner may send lines up to LineFramer's maximum).
    package var maximumPendingInput = 1 << 16
    /// Seconds on the monotonic clock: the simulation's time and the pauses run on it.
    let clock: @Sendable () -> Double

    /// Asked between polls: `true` ends the server.
    let stopped: @Sendable () -> Bool

    /// Serves `session` at `path`; motion states to the session's owner every `stateInterval`
    /// seconds; stops after `duration` seconds when given or when `stopped` says so (docksim:
    /// on SIGINT or SIGTERM; the server leaves a program's signals alone).
    package init(path: String, session: Endpoint, trace: OutputFile?, stateInterval: Double, duration: Double?,
                stopped: @escaping @Sendable () -> Bool = { false },
                clock: @escaping @Sendable () -> Double = MonotonicClock.now, log: @escaping @Sendable (String) -> Void) {
        self.stopped = stopped
        self.clock = clock
        self.log = log
        self.path = path
        self.session = session
        self.trace = trace
        self.stateInterval = stateInterval
        self.duration = duration
    }

    final class Client {
        let fd: Int32
        let number: Int
        var framer = LineFramer()
        var output: [UInt8] = []
        /// Close once the output is written (a refused client gets its error first).
        var closing = false
        var gone = false
        /// When it connected (the server's clock), and whether a whole line has come since.
        let connectedAt: Double
        var heardFrom = false
        var malformed = 0
        /// Lines it may still send now (refilled at ``linesPerSecondAllowed`` while it has no session).
        var lineBudget: Double
        var budgetRefilledAt: Double

        init(fd: Int32, number: Int, connectedAt: Double, lineBudget: Double) {
            self.fd = fd
            self.number = number
            self.connectedAt = connectedAt
            self.lineBudget = lineBudget
            self.budgetRefilledAt = connectedAt
        }

        /// Refills the line budget for the time since the last refill, up to `burst`.
        func refill(at time: Double, rate: Double, burst: Double) {
            lineBudget = min(burst, lineBudget + max(0, time - budgetRefilledAt) * rate)
            budgetRefilledAt = time
        }
    }

    package mutating func serve() throws(SocketError) {
        try serve(on: try ListeningSocket(path: path))
    }

    /// Serves on a socket bound already (a program that must know at once whether the path can
    /// be served: `track --serve`); removes it at the end.
    package mutating func serve(on listening: ListeningSocket) throws(SocketError) {

        defer { listening.remove() }
        log("serving \(DockSession.protocolName) on \(listening.path)")
        // The simulation's clock (and the script's) starts when the first client connects, so
        // scripted events are not played to nobody; --duration counts from the start.
        let launched = clock()
        var start: Double?
        var clients: [Client] = []
        var owner: Client?  // the client holding the session
        var nextState = 0.0
        var connections = 0
        var acceptPausedUntil: Double?
        var readBuffer = [UInt8](repeating: 0, count: 65536)
        func now() -> Double { start.map { clock() - $0 } ?? 0 }

        func drop(_ client: Client, _ why: String?) {
            guard !client.gone else { return }
            client.gone = true
            close(client.fd)
            if let why { log("client \(client.number) \(why)") }
            if owner === client {
                owner = nil
                log(session.sessionEnded(at: now()))
            }
        }
        func flush(_ client: Client) {
            while !client.output.isEmpty && !client.gone {
                let n = client.output.withUnsafeBytes { bytes in
                    Syscall.retryingEINTR { send(client.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                }
                if n < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { return }
                    drop(client, "hung up (\(String(cString: strerror(errno))))")
                    return
                }
                client.output.removeFirst(n)
            }
            if client.closing && client.output.isEmpty { drop(client, nil) }
        }
        func enqueue(_ line: String, to client: Client) {
            guard !client.gone else { return }
            client.output += Array(line.utf8)
            client.output.append(0x0A)
            if client.output.count > maximumPendingOutput {
                drop(client, "is not reading (more than \(maximumPendingOutput) bytes waiting); dropped")
                return
            }
            flush(client)
        }

        while duration.map({ clock() - launched < $0 }) ?? true {
            if stopped() { break }
            let listenerPaused = acceptPausedUntil.map { clock() < $0 } ?? false
            var fds = [pollfd(fd: listening.fd, events: listenerPaused ? 0 : Int16(POLLIN), revents: 0)]
            let burst = 2 * linesPerSecondAllowed
            let polledAt = clock()
            for client in clients where owner !== client {
                client.refill(at: polledAt, rate: linesPerSecondAllowed, burst: burst)
            }
            // A client without the session that has spent its line budget, or has its input
            // budget waiting, is not read until it has more (its socket buffer fills and the
            // sender waits: backpressure, not a drop).
            fds += clients.map {
                let reading = owner === $0 || ($0.lineBudget >= 1 && $0.framer.pendingByteCount < maximumPendingInput)
                return pollfd(fd: $0.fd, events: (reading ? Int16(POLLIN) : 0) | ($0.output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
            }
            let ready: Int
            do {
                ready = try Syscall.poll(&fds, seconds: 0.02)
            } catch {
                throw SocketError("\(error)")
            }
            let t = now()
            // Scripted events and motion states go to the session's owner only; the session
            // stays the owner's through an undock and a re-dock.
            for line in session.advance(to: t) {
                if let holder = owner { enqueue(line, to: holder) }
            }
            for client in clients where !client.heardFrom && !client.closing && clock() - client.connectedAt > silenceAllowed {
                drop(client, String(format: "said nothing for %.0f s; closed", silenceAllowed))
            }
            if let holder = owner, t >= nextState {
                enqueue(session.motionStateLine(), to: holder)
                nextState = t + stateInterval
            }
            let pending = session.pendingLines()
            if let holder = owner { for line in pending { enqueue(line, to: holder) } }
            if ready > 0 && fds[0].revents & Int16(POLLIN) != 0 {
                let fd = accept(listening.fd, nil, nil)
                if fd >= 0 {
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                    connections += 1
                    let client = Client(fd: fd, number: connections, connectedAt: clock(), lineBudget: 2 * linesPerSecondAllowed)
                    if start == nil { start = clock() }
                    let acceptedAt = clock()
                    if clients.count >= maximumClients,
                       let silent = clients.filter({ !$0.heardFrom && !$0.closing && !$0.gone && owner !== $0
                                                     && acceptedAt - $0.connectedAt >= silenceBeforeMakingRoom })
                                           .min(by: { $0.connectedAt < $1.connectedAt }) {
                        drop(silent, nil)
                        clients.removeAll { $0.gone }
                    }
                    if clients.count >= maximumClients {
                        client.closing = true
                        enqueue(#"{"type":"error","code":"invalidRequest","message":"too many connections (\#(maximumClients))"}"#, to: client)
                        if !client.gone { clients.append(client) }
                    } else {
                        clients.append(client)
                    }
                } else if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    // Out of descriptors: the pending connection stays queued; stop asking for a
                    // moment instead of spinning on a listener that is always readable.
                    log("cannot accept a connection: \(String(cString: strerror(errno))); retrying in 0.5 s")
                    acceptPausedUntil = clock() + 0.5
                }
            }
            for (i, pfd) in fds.enumerated().dropFirst() {
                let client = clients[i - 1]
                if pfd.revents & Int16(POLLOUT) != 0 { flush(client) }
                guard !client.gone else { continue }
                if pfd.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    let n = Syscall.retryingEINTR { read(client.fd, &readBuffer, readBuffer.count) }
                    if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                        drop(client, owner === client ? "hung up" : nil)
                        continue
                    }
                    if n > 0 { client.framer.append(readBuffer[0..<n]) }
                }
                // Lines read earlier wait here while the client's budget is spent.
                while !client.closing, !client.gone, owner === client || client.lineBudget >= 1,
                      let item = client.framer.next() {
                    if owner !== client { client.lineBudget -= 1 }
                    client.heardFrom = true
                    let parsed = DockRequest.parse(item)
                    if let holder = owner, holder !== client, case .success(let request)? = parsed {
                        // Decided on the parsed request, however it is spelled.
                        client.closing = true
                        let refusal = DockSession.errorLine(.sessionInUse)
                        for line in DockAnswer(to: request, [refusal]).lines { enqueue(line, to: client) }
                        break
                    }
                    if case .failure? = parsed, owner !== client {
                        client.malformed += 1
                        if client.malformed > malformedAllowed {
                            drop(client, "sent \(malformedAllowed) lines that are not requests; closed")
                            break
                        }
                    }
                    let replies = session.handle(parsed, at: now())
                    // The session is the client's whose request opened it (a malformed line opens nothing).
                    if owner == nil, session.hasSession, case .success? = parsed { owner = client }
                    for reply in replies { enqueue(reply, to: client) }
                    do {
                        try session.writeTrace(to: trace)
                    } catch {
                        throw SocketError("\(error)")
                    }
                }
                if owner !== client, !client.gone, !client.closing, client.lineBudget >= 1,
                   client.framer.pendingByteCount >= maximumPendingInput {
                    drop(client, "sent \(maximumPendingInput) bytes without a whole line; closed")
                }
            }
            clients.removeAll { $0.gone }
        }
        // The dock (and a device behind it) is left still however the server ends.
        let ended = now()
        log(session.sessionEnded(at: ended))
        do { try session.traceComingToRest(after: ended, to: trace) } catch { log("--trace: \(error)") }
        for client in clients {
            flush(client)
            // A flush that ends a closing client has closed it already: a second close would
            // close whatever the number was given to meanwhile (in track --serve, another
            // thread's file or socket).
            if !client.gone {
                client.gone = true
                close(client.fd)
            }
        }
    }
}
