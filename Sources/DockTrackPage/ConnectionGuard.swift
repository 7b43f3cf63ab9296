import DockTrackCore
import DockTrackSystem
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Synchronization

/// What the control page's server allows a connection, and how many at once: past these a
/// peer is answered (where HTTP has an answer) and closed, so that no peer, however slow,
/// silent or large, holds the tracker's memory or descriptors. docs/reliability.md lists them.
package struct PageLimits: Sendable {
    /// Connections open at once. Past it the slowest connection still waiting for its request
    /// (none sent yet, or a head unfinished: the fewest bytes a second since it began) is
    /// closed to make room, unless it opened within ``graceSeconds``; with none such, the new
    /// connection is closed. A page's WebSocket and a request being answered are never closed
    /// for room. So peers that trickle their heads and reconnect when closed (100 of them, a
    /// byte a second each) give way to every new visitor, whose head comes at once.
    package var maximumConnections = 64
    /// Seconds a new connection is safe from being closed for room: time for its head to come.
    package var graceSeconds = 0.5
    /// Bytes of a request's head (request line and headers together); past it: 431 and closed.
    package var maximumHeadBytes = 16 * 1024
    /// Seconds a request's head may take from its first byte; past it: 408 and closed (a peer
    /// that sends a byte now and then). A browser sends its head in one packet.
    package var headSeconds = 3.0
    /// Seconds a connection may stay silent between requests, or a WebSocket without a byte
    /// from its peer (a live page answers the server's pings, every ``pingSeconds``).
    package var idleSeconds = 30.0
    /// The WebSocket ping period.
    package var pingSeconds = 10.0

    package init() {}

    /// The connections allowed with `descriptors` the process may open: at most
    /// ``maximumConnections``, and no more than a quarter of the descriptors left over once the
    /// run's own (camera, files, models, dock, threads: 64 set aside) are counted.
    package func connections(withDescriptors descriptors: Int) -> Int {
        max(4, min(maximumConnections, (descriptors - 64) / 4))
    }
}

/// The page server's connections, shared by their guards: how many are open, and which may
/// give way to a new one.
final class ConnectionRegistry: Sendable {
    private struct Entry {
        let channel: any Channel
        let opened: Double
        /// When a complete request head was last read (nil: never).
        var lastRequest: Double?
        /// A WebSocket (a page's session): never closed to make room.
        var webSocket = false
        /// The unfinished head's bytes and when its first came (nil: between requests).
        var headBytes = 0
        var headSince: Double?

        /// Whether it waits for a request: none came yet, or one is coming.
        var waitsForRequest: Bool { !webSocket && (lastRequest == nil || headSince != nil) }

        /// Bytes a second of what it is waiting for, since the wait began.
        func headRate(at now: Double) -> Double {
            Double(headBytes) / max(0.001, now - (headSince ?? opened))
        }
    }
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])
    let limits: PageLimits
    let capacity: Int
    private let clock: @Sendable () -> Double

    init(limits: PageLimits, capacity: Int, clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.limits = limits
        self.capacity = capacity
        self.clock = clock
    }

    var count: Int { entries.withLock { $0.count } }

    /// A new connection: `true` when it may stay. At capacity the slowest connection waiting
    /// for its request (``PageLimits/maximumConnections``) is closed for it.
    func admit(_ channel: any Channel) -> Bool {
        let now = clock()
        let (admitted, evicted) = entries.withLock { entries -> (Bool, (any Channel)?) in
            var evicted: (any Channel)?
            if entries.count >= capacity {
                let waiting = entries.filter { $0.value.waitsForRequest && now - $0.value.opened >= limits.graceSeconds }
                guard let slowest = waiting.min(by: { a, b in
                    let (rateA, rateB) = (a.value.headRate(at: now), b.value.headRate(at: now))
                    return rateA != rateB ? rateA < rateB : a.value.opened < b.value.opened
                }) else { return (false, nil) }
                evicted = entries.removeValue(forKey: slowest.key)?.channel
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, opened: now, lastRequest: nil)
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        return admitted
    }

    /// A complete request head came on `channel` (`webSocket`: one asking for an upgrade).
    func requested(_ channel: any Channel, webSocket: Bool) {
        let now = clock()
        entries.withLock {
            $0[ObjectIdentifier(channel)]?.lastRequest = now
            $0[ObjectIdentifier(channel)]?.headBytes = 0
            $0[ObjectIdentifier(channel)]?.headSince = nil
            if webSocket { $0[ObjectIdentifier(channel)]?.webSocket = true }
        }
    }

    /// `channel`'s unfinished head now has `bytes`, the first of them at `since`.
    func inHead(_ channel: any Channel, bytes: Int, since: Double) {
        entries.withLock {
            $0[ObjectIdentifier(channel)]?.headBytes = bytes
            $0[ObjectIdentifier(channel)]?.headSince = since
        }
    }

    func remove(_ channel: any Channel) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes every connection (the server stops): one that never sent a request is otherwise
    /// waited for until its head times out, as the server's graceful end waits for it.
    func closeAll() {
        for channel in entries.withLock({ $0.values.map(\.channel) }) { channel.close(promise: nil) }
    }
}

/// The first handler of every page connection, on the raw bytes: admits it (or not), bounds
/// each request's head in size and time, and closes a connection left silent. After a
/// WebSocket upgrade it only watches for silence.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Phase {
        /// HTTP: between requests (since then), or in a head (since its first byte).
        case http(since: Double)
        /// A WebSocket: the last byte's time.
        case webSocket(lastByte: Double)
        case closed
    }
    private var phase: Phase
    private var heads: HTTPRequestHeads
    private let registry: ConnectionRegistry
    private let clock: @Sendable () -> Double
    private var timer: RepeatedTask?
    private var admitted = false

    init(registry: ConnectionRegistry, clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.registry = registry
        self.clock = clock
        heads = HTTPRequestHeads(maximumBytes: registry.limits.maximumHeadBytes)
        phase = .http(since: clock())
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !admitted, case .http = phase else { return }
        admitted = true
        guard registry.admit(context.channel) else {
            phase = .closed
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(500), delay: .milliseconds(500)) { _ in
            handler.value.check(loopBound.value)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(context)
    }

    private func finish(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        phase = .closed
        registry.remove(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let now = clock()
        switch phase {
        case .closed:
            return
        case .webSocket:
            phase = .webSocket(lastByte: now)
        case .http(let since):
            let wasInHead = heads.isInHead
            for event in heads.append(buffer.readableBytesView) {
                switch event {
                case .tooLarge:
                    refuse(context, status: "431 Request Header Fields Too Large")
                    return
                case .head(let head):
                    // A request line the HTTP parser cannot read (raw bytes in the path) would get
                    // no answer and hold the connection: answered 400 and closed here.
                    guard HTTPRequestHeads.hasReadableRequestLine(head) else {
                        refuse(context, status: "400 Bad Request")
                        return
                    }
                    registry.requested(context.channel, webSocket: HTTPRequestHeads.asksForUpgrade(head))
                }
            }
            if heads.upgraded {
                phase = .webSocket(lastByte: now)
            } else if heads.isInHead {
                // A head's time runs from its first byte.
                let headSince = wasInHead ? since : now
                phase = .http(since: headSince)
                registry.inHead(context.channel, bytes: heads.pending.count, since: headSince)
            } else {
                phase = .http(since: now)
            }
        }
        context.fireChannelRead(data)
    }

    private func check(_ context: ChannelHandlerContext) {
        let now = clock()
        let limits = registry.limits
        switch phase {
        case .http(let since) where heads.isInHead && now - since > limits.headSeconds:
            refuse(context, status: "408 Request Timeout")
        case .http(let since) where !heads.isInHead && now - since > limits.idleSeconds:
            close(context)
        case .webSocket(let last) where now - last > limits.idleSeconds:
            close(context)
        default:
            break
        }
    }

    /// A short answer written straight to the socket, then closed.
    private func refuse(_ context: ChannelHandlerContext, status: String) {
        let text = "HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        phase = .closed
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text))).whenComplete { _ in
            bound.value.close(promise: nil)
        }
    }

    private func close(_ context: ChannelHandlerContext) {
        phase = .closed
        context.close(promise: nil)
    }
}

/// A server child channel with a ``ConnectionGuard`` in front of `inner`'s handlers.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let registry: ConnectionRegistry

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(registry: registry), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
