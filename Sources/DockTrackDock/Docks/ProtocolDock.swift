import DockTrackCore
import DockTrackClient
import DockTrackSystem
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The dock at the other end of a lost connection, or one that never answered.
package struct DockConnectionError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A dock in another process that speaks the dock protocol on a Unix socket (docksim
/// `--socket`, or anything that speaks it): commands go out as they are made, and where the
/// dock pointed at any time comes from the motion states it reports, interpolated
/// (``ReportedMotion``), with its command-to-motion latency measured from them.
///
/// The dock's clock is its own: each report is timed on arrival with `clock` (the frame
/// clock), and the smallest difference seen maps the dock's times onto the frame clock.
package final class ProtocolDock: Dock, Sendable {
    package let path: String
    private let fd: Int32
    private let clock: @Sendable () -> Double
    /// What the reading thread hears and the frame loop uses.
    private struct Heard {
        var reported = ReportedMotion()
        /// Frame-clock arrival time minus the dock's time, for the latest reports.
        var offsets: [Double] = []
        var refusals: [DockError] = []
        var hungUp = false
        var lastQuery = -Double.infinity
        var hello: DockAccessory?
        var heldLimits: DockLimits?
        /// Whether the phone sits on the dock (its `undocked` and `docked` events).
        var docked = true
        /// What the dock said about itself since the frame loop last took it.
        var news: [DockNews] = []
        /// Clients' commands sent with an id of this connection's, waiting for the dock's own
        /// answer to them (``perform(_:at:answered:)``).
        var awaitingAnswer: [Int: (sentAt: Double, answered: @Sendable (DockError?) -> Void)] = [:]
        var nextRequest = 1

        var offset: Double { offsets.min() ?? 0 }
    }
    private let heard = Monitor(Heard())
    /// Lines go out whole, one at a time (the idle stop writes from a thread of its own).
    private let writer: SocketLineWriter
    /// Reads the dock's lines until the socket is shut down or the dock hangs up.
    private let reader: OwnedThread
    private let idleStop: IdleStop?

    /// Connects to the dock serving `path`, says hello and waits (up to `timeout` seconds) for
    /// its answer, its limits and a first motion state. `clock` is the frame clock (seconds).
    /// With `stopWhenIdle`, a dock left turning is sent a stop after that many seconds without a
    /// command or a motion query (``IdleStop``).
    package init(path: String, clock: @escaping @Sendable () -> Double, timeout: Double = 3, stopWhenIdle: Double? = nil) throws {
        self.path = path
        self.clock = clock
        let fd: Int32
        do {
            fd = try UnixSocket.connect(to: path)
        } catch {
            throw DockConnectionError("\(path): no dock answers there (\(error)); start one, e.g. docksim --socket \(path)")
        }
        self.fd = fd
        let heard = heard
        let writer = SocketLineWriter(fd: fd)
        self.writer = writer
        let reader = OwnedThread(named: "docktrack dock") { Self.read(fd, clock: clock, into: heard, writer: writer) }
        self.reader = reader
        writer.write(Self.helloRequest)
        writer.write(#"{"command":"getLimits"}"#)
        let (hello, limits, refusal, hungUp) = heard.withLock(
            waitingFor: { ($0.hello != nil && $0.heldLimits != nil && $0.reported.latest != nil) || $0.hungUp || !$0.refusals.isEmpty },
            until: Date(timeIntervalSinceNow: timeout)) { heard, _ in (heard.hello, heard.heldLimits, heard.refusals.first, heard.hungUp) }
        guard hello != nil, limits != nil else {
            shutdown(fd, Int32(SHUT_RDWR))
            reader.join()
            close(fd)
            let why = refusal.map { "refused the session: \($0)" } ?? (hungUp ? "hung up" : "did not answer within \(timeout) s")
            throw DockConnectionError("the dock at \(path) \(why)")
        }
        // A dock with a battery says its state from the start (then when it is news).
        if hello?.capabilities.contains(DockCapability.battery.rawValue) == true { writer.write(#"{"command":"getBattery"}"#) }
        idleStop = stopWhenIdle.map { after in
            IdleStop(after: after, clock: clock) {
                // An undocked dock stopped itself and takes no command.
                let (time, docked) = heard.withLock { (clock() - $0.offset, $0.docked) }
                if docked { writer.write(DockCommand.setAngularVelocity(.zero).jsonLine(time: time)) }
            }
        }
    }

    /// Seconds a client's command waits for the dock's answer before it is answered `unknown`.
    package static let answerTimeout = 5.0

    private static let helloRequest = #"{"type":"hello","protocols":["\#(DockSession.protocolName)"]}"#

    /// Whether the phone sits on the dock: between its `undocked` and `docked` events, nothing
    /// is sent and every command is refused here with `invalidated` (the dock stopped its motors).
    package var isDocked: Bool { heard.withLock { $0.docked } }

    /// What the dock said about itself since the last call, oldest first: docking, its tracking
    /// button, accessory events (buttons, shutter, zoom), battery states. At most
    /// ``maximumNews`` wait; older ones go.
    package func takeNews() -> [DockNews] {
        heard.withLock { heard in
            defer { heard.news = [] }
            return heard.news
        }
    }
    package static let maximumNews = 256

    /// Stops sent because the frame loop fell silent.
    package var idleStopsSent: Int { idleStop?.stopsSent ?? 0 }

    /// The dock as it introduced itself.
    package var accessory: DockAccessory { heard.withLock { $0.hello! } }

    /// The limits the dock last reported (after a `setLimits`, the narrowed ones).
    package var limits: DockLimits { heard.withLock { $0.heldLimits! } }
    package var reportedLimits: DockLimits? { limits }

    /// The connection is closed and the reading thread joined.
    deinit {
        idleStop?.end()
        shutdown(fd, Int32(SHUT_RDWR))
        reader.join()
        close(fd)
    }

    /// Where the dock pointed at `time` (frame clock), from its reports. A fresh report is asked
    /// for when the last is more than a frame old.
    package func motion(at time: Double) throws -> MotionState {
        idleStop?.contact()
        let now = clock()
        let (state, ask) = try heard.withLock { heard throws -> (MotionState?, Bool) in
            guard !heard.hungUp else { throw DockConnectionError("the dock at \(path) hung up") }
            let offset = heard.offset
            let stale = (heard.reported.latest.map { $0.time + offset } ?? -.infinity) < now - 0.03
            // An undocked dock answers queries with an error; its states come on its interval.
            let ask = stale && now - heard.lastQuery > 0.03 && heard.docked
            if ask { heard.lastQuery = now }
            var state = heard.reported.motion(at: time - offset)
            state?.time = time
            return (state, ask)
        }
        if ask { writer.write(#"{"command":"getMotionState"}"#) }
        guard let state else { throw DockConnectionError("the dock at \(path) sent no motion state") }
        return state
    }

    /// Sends `command` (issued at `time`, frame clock), the run's own: it goes without an id, and
    /// the dock answers only a refusal, later: the first refusal without an id that arrived since
    /// the last command is thrown here. While the dock is undocked nothing is sent: the command is
    /// refused at once with `invalidated`.
    package func perform(_ command: DockCommand, at time: Double) throws {
        let (refusal, dockTime, _) = try send(command, at: time, answered: nil)
        guard writer.write(command.jsonLine(time: dockTime)) else { throw DockConnectionError("the dock at \(path) hung up") }
        if let refusal { throw refusal }
    }

    /// Sends a client's `command` with an id of this connection's, and calls `answered` when the
    /// dock's answer to that id arrives (`done`: `nil`; an error: the dock's refusal), or with
    /// `notConnected` when the dock hangs up first. Answers are matched by id, never by order: a
    /// refusal of one request can no longer land on the next.
    package func perform(_ command: DockCommand, at time: Double, answered: @escaping @Sendable (DockError?) -> Void) throws {
        let dockTime: Double, id: Int
        do {
            (_, dockTime, id) = try send(command, at: time, answered: answered)
        } catch let refusal as DockError {
            return answered(refusal)  // undocked: refused here, nothing sent
        }
        guard writer.write(RequestID.number(id).tagging(command.jsonLine(time: dockTime))) else {
            if let lost = heard.withLock({ $0.awaitingAnswer.removeValue(forKey: id) }) { lost.answered(.notConnected) }
            throw DockConnectionError("the dock at \(path) hung up")
        }
    }

    /// What both kinds of command do before they go out: the model of the motors told, the
    /// refusals heard so far taken, an answer awaited (with `answered`).
    private func send(_ command: DockCommand, at time: Double,
                      answered: (@Sendable (DockError?) -> Void)?) throws -> (DockError?, Double, Int) {
        var overdue: [@Sendable (DockError?) -> Void] = []
        defer { for waiting in overdue { waiting(.unknown("the dock did not answer within \(Self.answerTimeout) s")) } }
        let (refusal, dockTime, id) = try heard.withLock { heard throws -> (DockError?, Double, Int) in
            guard !heard.hungUp else { throw DockConnectionError("the dock at \(path) hung up") }
            guard heard.docked else { throw DockError.invalidated }
            let dockTime = time - heard.offset
            heard.reported.commanded(command, at: dockTime)
            // A dock that never answers a command is not waited for forever (nor remembered).
            let now = clock()
            for (id, waiting) in heard.awaitingAnswer where now - waiting.sentAt > Self.answerTimeout {
                heard.awaitingAnswer[id] = nil
                overdue.append(waiting.answered)
            }
            if let answered {
                let id = heard.nextRequest
                heard.awaitingAnswer[id] = (now, answered)
                heard.nextRequest += 1
                return (nil, dockTime, id)
            }
            defer { heard.refusals.removeAll() }
            return (heard.refusals.first, dockTime, 0)
        }
        idleStop?.contact(moving: IdleStop.keepsMoving(command))
        return (refusal, dockTime, id)
    }

    /// The latency measured from the dock's reports (0.05 s until measured).
    package var commandLatency: Double { heard.withLock { $0.reported.latency.estimate } }

    /// The latency samples measured so far (seconds).
    package var latencySamples: [Double] { heard.withLock { $0.reported.latency.samples } }

    /// The reading thread: each message the dock sends, until it hangs up or the socket is shut.
    private static func read(_ fd: Int32, clock: @Sendable () -> Double, into heard: Monitor<Heard>, writer: SocketLineWriter) {
        for item in LineReader(fileDescriptor: fd) {
            guard case .line(let line) = item, let reply = DockReply(line: line) else { continue }
            let message = reply.message
            let arrival = clock()
            let (redocked, answered) = heard.withLock { heard -> (Bool, (() -> Void)?) in
                // The answer to a client's command, by its id: to that command alone.
                if case .number(let id)? = reply.id, let waiting = heard.awaitingAnswer[id]?.answered {
                    switch message {
                    case .done:
                        heard.awaitingAnswer[id] = nil
                        return (false, { waiting(nil) })
                    case .error(let code, let text):
                        heard.awaitingAnswer[id] = nil
                        return (false, { waiting(DockError(code: code, message: text)) })
                    default: break  // setLimits' limits line comes before its done
                    }
                }
                if let news = DockNews(message, line: line) {
                    heard.news.append(news)
                    if heard.news.count > maximumNews { heard.news.removeFirst(heard.news.count - maximumNews) }
                }
                switch message {
                case .hello(let accessory): heard.hello = accessory
                case .limits(let limits, _):
                    heard.heldLimits = limits
                    heard.reported.acceleration = DockVector(x: limits.pitch.maximumAcceleration, y: limits.yaw.maximumAcceleration,
                                                             z: limits.roll.maximumAcceleration)
                case .motionState(let state):
                    heard.offsets.append(arrival - state.time)
                    if heard.offsets.count > 64 { heard.offsets.removeFirst() }
                    heard.reported.record(state)
                case .error(let code, let message):
                    // A query or command that crossed the undocking is no refusal of the run's.
                    if code != "invalidated" || heard.docked { heard.refusals.append(DockError(code: code, message: message)) }
                case .dockEvent("undocked"):
                    // The dock stops its motors as the phone comes off: so does the model of them.
                    heard.docked = false
                    heard.reported.stopped(at: heard.reported.latest?.time ?? 0)
                case .dockEvent("docked"):
                    heard.docked = true
                    return (true, nil)
                default: break
                }
                return (false, nil)
            }
            answered?()
            // Back on the dock: the session opens again with a hello (the dock's answer updates
            // what it says of itself).
            if redocked { writer.write(helloRequest) }
        }
        // Commands still waiting for an answer never get one.
        let unanswered = heard.withLock { heard in
            heard.hungUp = true
            defer { heard.awaitingAnswer = [:] }
            return heard.awaitingAnswer.values.map(\.answered)
        }
        for waiting in unanswered { waiting(.notConnected) }
    }
}
