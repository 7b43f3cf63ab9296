import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The dock at the other end of a lost connection, or one that never answered.
public struct DockConnectionError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A dock in another process that speaks the dock protocol on a Unix socket (docksim
/// `--socket`, or anything that speaks it): commands go out as they are made, and where the
/// dock pointed at any time comes from the motion states it reports, interpolated
/// (``ReportedMotion``), with its command-to-motion latency measured from them.
///
/// The dock's clock is its own: each report is timed on arrival with `clock` (the frame
/// clock), and the smallest difference seen maps the dock's times onto the frame clock.
public final class ProtocolDock: Dock, @unchecked Sendable {
    public let path: String
    private let fd: Int32
    private let clock: @Sendable () -> Double
    private let lock = NSLock()
    private let arrived = NSCondition()
    private var reported = ReportedMotion()
    /// Frame-clock arrival time minus the dock's time, for the latest reports.
    private var offsets: [Double] = []
    private var refusals: [DockError] = []
    private var hungUp = false
    private var lastQuery = -Double.infinity
    private var hello: DockAccessory?
    private var heldLimits: DockLimits?

    /// Connects to the dock serving `path`, says hello and waits (up to `timeout` seconds) for
    /// its answer, its limits and a first motion state. `clock` is the frame clock (seconds).
    /// With `stopWhenIdle`, a dock left turning is sent a stop after that many seconds without a
    /// command or a motion query (``IdleStop``).
    public init(path: String, clock: @escaping @Sendable () -> Double, timeout: Double = 3, stopWhenIdle: Double? = nil) throws {
        self.path = path
        self.clock = clock
        do {
            fd = try UnixSocket.connect(to: path)
        } catch {
            throw DockConnectionError("\(path): no dock answers there (\(error)); start one, e.g. docksim --socket \(path)")
        }
        Thread.detachNewThread { [self] in readLoop() }
        write(#"{"type":"hello","protocols":["\#(DockSession.protocolName)"]}"#)
        write(#"{"command":"getLimits"}"#)
        let deadline = Date(timeIntervalSinceNow: timeout)
        arrived.lock()
        while (hello == nil || heldLimits == nil || reported.latest == nil) && !hungUp && refusals.isEmpty {
            if !arrived.wait(until: deadline) { break }
        }
        let (hello, limits, refusal, hungUp) = (hello, heldLimits, refusals.first, hungUp)
        arrived.unlock()
        guard let hello, let limits else {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
            let why = refusal.map { "refused the session: \($0)" } ?? (hungUp ? "hung up" : "did not answer within \(timeout) s")
            throw DockConnectionError("the dock at \(path) \(why)")
        }
        _ = (hello, limits)
        idleStop = stopWhenIdle.map { after in
            IdleStop(after: after, clock: clock) { [weak self] in
                guard let self else { return }
                let time = clock() - lock.withLock { offsets.min() ?? 0 }
                write(DockCommand.setAngularVelocity(.zero).jsonLine(time: time))
            }
        }
    }

    private var idleStop: IdleStop?

    /// Stops sent because the frame loop fell silent.
    public var idleStopsSent: Int { idleStop?.stopsSent ?? 0 }

    /// The dock as it introduced itself.
    public var accessory: DockAccessory { lock.withLock { hello! } }

    /// The limits the dock last reported (after a `setLimits`, the narrowed ones).
    public var limits: DockLimits { lock.withLock { heldLimits! } }
    public var reportedLimits: DockLimits? { limits }

    deinit {
        idleStop?.end()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// Where the dock pointed at `time` (frame clock), from its reports. A fresh report is asked
    /// for when the last is more than a frame old.
    public func motion(at time: Double) throws -> MotionState {
        idleStop?.contact()
        let now = clock()
        let (state, ask) = try lock.withLock { () throws -> (MotionState?, Bool) in
            guard !hungUp else { throw DockConnectionError("the dock at \(path) hung up") }
            let offset = offsets.min() ?? 0
            let stale = (reported.latest.map { $0.time + offset } ?? -.infinity) < now - 0.03
            let ask = stale && now - lastQuery > 0.03
            if ask { lastQuery = now }
            var state = reported.motion(at: time - offset)
            state?.time = time
            return (state, ask)
        }
        if ask { write(#"{"command":"getMotionState"}"#) }
        guard let state else { throw DockConnectionError("the dock at \(path) sent no motion state") }
        return state
    }

    /// Sends `command` (issued at `time`, frame clock). The dock answers errors later: the
    /// first refusal that arrived since the last command is thrown here.
    public func perform(_ command: DockCommand, at time: Double) throws {
        let (refusal, dockTime) = try lock.withLock { () throws -> (DockError?, Double) in
            guard !hungUp else { throw DockConnectionError("the dock at \(path) hung up") }
            let dockTime = time - (offsets.min() ?? 0)
            reported.commanded(command, at: dockTime)
            defer { refusals.removeAll() }
            return (refusals.first, dockTime)
        }
        idleStop?.contact(moving: IdleStop.keepsMoving(command))
        guard write(command.jsonLine(time: dockTime)) else { throw DockConnectionError("the dock at \(path) hung up") }
        if let refusal { throw refusal }
    }

    /// The latency measured from the dock's reports (0.05 s until measured).
    public var commandLatency: Double { lock.withLock { reported.latency.estimate } }

    /// The latency samples measured so far (seconds).
    public var latencySamples: [Double] { lock.withLock { reported.latency.samples } }

    /// Writes one line whole (the idle stop writes from a thread of its own).
    @discardableResult
    private func write(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        return writeLock.withLock { (try? Syscall.writeAll(bytes, to: fd, socketFlags: Int32(MSG_NOSIGNAL))) != nil }
    }

    private let writeLock = NSLock()

    private func readLoop() {
        for item in LineReader(fileDescriptor: fd) {
            guard case .line(let line) = item, let message = DockMessage(line: line) else { continue }
            let arrival = clock()
            arrived.lock()
            lock.withLock {
                switch message {
                case .hello(let accessory): hello = accessory
                case .limits(let limits):
                    heldLimits = limits
                    reported.acceleration = DockVector(x: limits.pitch.maximumAcceleration, y: limits.yaw.maximumAcceleration,
                                                       z: limits.roll.maximumAcceleration)
                case .motionState(let state):
                    offsets.append(arrival - state.time)
                    if offsets.count > 64 { offsets.removeFirst() }
                    reported.record(state)
                case .error(let code, let message): refusals.append(DockError(code: code, message: message))
                case .dockEvent("undocked"): refusals.append(.invalidated)
                default: break
                }
            }
            arrived.signal()
            arrived.unlock()
        }
        arrived.lock()
        lock.withLock { hungUp = true }
        arrived.signal()
        arrived.unlock()
    }
}
