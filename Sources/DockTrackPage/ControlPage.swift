import DockTrackCore
import DockTrackDock
import DockTrackMedia
import DockTrackRuntime
import DockTrackSystem
import Foundation
import Hummingbird
import HummingbirdCore
import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// A page any browser opens, served by a running `track` (`--http HOST:PORT`): the live picture
/// with the subjects drawn, a tap to follow a person, framing, system tracking and a joystick.
///
/// The page is one more client of the run's control path (``TrackControl``, as `--serve`'s): its
/// WebSocket (`/ws`) speaks the dock protocol's lines, so a tap on the page and a protocol
/// `selectSubject` are the same request. The picture is the newest annotated frame as JPEG
/// (`/frame.jpg?after=N` waits for one newer than frame N): the frame loop only hands its canvas
/// over (newest wins) and the server encodes it when a page asks, so a page that reads slowly
/// costs tracking nothing.
///
/// Bound to loopback unless told otherwise; elsewhere a token is required on every request and
/// WebSocket (`?token=`), and a WebSocket's `Origin` must be the page's own host.
package final class ControlPage: FrameViewer {
    /// What the page shows: the newest frame, by number, and what to draw on it (nil: drawn).
    private struct Frames {
        var index = -1
        var image: Image?
        var annotation: FrameAnnotation?
        /// Requests waiting for a newer frame: the loop hands one over only while one waits.
        var waiting = 0
        /// When the next picture may be served (monotonic seconds): pages together get at most
        /// ``ControlPage/maximumPictureRate`` a second, however fast they ask.
        var nextSlot = -Double.infinity
    }
    /// Pictures a second served to all pages together, at most: a file tracked at full speed
    /// yields hundreds of frames a second, and encoding them all would take a core from tracking.
    package static let maximumPictureRate = 60.0
    private let frames = Monitor(Frames())
    /// The overview camera's newest picture, when the run has one.
    private struct OverviewSight {
        var image: Image
        var subjects: [TrackedSubject]
        var chosen: UUID?
    }
    private let overviewSight = Monitor<OverviewSight?>(nil)
    private let task: Mutex<Task<Void, any Error>?> = Mutex(nil)
    /// Whether the server's task has ended (its connections closed, its port let go).
    private let ended = Monitor(false)
    /// Whether ``stop()`` was called: the pages' connections close.
    private let stopping = Monitor(false)
    /// How long ``stop()`` waits for the server to end.
    package static let stopPatience = 5.0
    private let encoder = PictureEncoder()
    /// The address the page is served on, as bound (`host:port`).
    package let address: String
    /// What a request must carry (`?token=`), when the page is bound beyond loopback.
    package let token: String?
    private let registry: ConnectionRegistry
    /// Connections open now.
    package var connections: Int { registry.count }
    /// Connections allowed at once.
    package var connectionCapacity: Int { registry.capacity }

    /// Binds `host:port` (port 0: any free one) and serves the page for `control` until
    /// ``stop()``. Throws when the address cannot be bound.
    package init(host: String, port: Int, control: TrackControl, identity: AccessoryIdentity, token: String?,
                limits: PageLimits = PageLimits(), log: @escaping @Sendable (String) -> Void) throws {
        self.token = token
        let router = Router(context: BasicWebSocketRequestContext.self)
        let frames = frames
        let encoder = encoder
        let stopping = stopping
        let token = token
        // On loopback, only a loopback name: a page of any site whose name was made to point
        // at 127.0.0.1 (DNS rebinding) sends its own name as the Host.
        let loopback = Self.isLoopback(host)
        router.add(middleware: HostCheck(loopbackOnly: loopback))
        router.add(middleware: TokenCheck(token: token))
        router.get("/") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: ControlPageHTML.page)))
        }
        router.get("/frame.jpg") { request, _ -> Response in
            let after = request.uri.queryParameters.get("after", as: Int.self) ?? -1
            // Up to 2 s for a frame newer than the one the page has, without holding a thread
            // (a blocked wait held one of the two the machine's tasks share). While it waits the
            // loop hands frames over; otherwise it draws none for the page.
            let deadline = MonotonicClock.now() + 2
            var (index, image, annotation) = frames.withLock { ($0.index, $0.image, $0.annotation) }
            if index <= after {
                frames.withLock { $0.waiting += 1 }
                defer { frames.withLock { $0.waiting -= 1 } }
                while index <= after, MonotonicClock.now() < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                    (index, image, annotation) = frames.withLock { ($0.index, $0.image, $0.annotation) }
                }
            }
            guard var image, index > after else { return Response(status: .noContent) }
            let now = MonotonicClock.now()
            let slot = frames.withLock { frames in
                frames.nextSlot = max(now, frames.nextSlot + 1 / Self.maximumPictureRate)
                return frames.nextSlot
            }
            if slot > now {
                try await Task.sleep(for: .milliseconds(Int(((slot - now) * 1000).rounded(.up))))
                (index, image, annotation) = frames.withLock { ($0.index, $0.image!, $0.annotation) }  // the newest by then
            }
            // Drawn (once: a second page asking for it gets it drawn) and encoded off the frame
            // loop, below its priority.
            let (drawn, jpeg) = try await encoder.encode(image, annotation: annotation, quality: 75)
            if annotation != nil { frames.withLock { if $0.index == index { ($0.image, $0.annotation) = (drawn, nil) } } }
            var headers: HTTPFields = [.contentType: "image/jpeg", .cacheControl: "no-store"]
            headers[Self.frameNumber] = "\(index)"
            return Response(status: .ok, headers: headers,
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        // The overview camera's newest picture with its people (the one followed in yellow);
        // 404 in a run without one.
        router.get("/overview.jpg") { [overviewSight, encoder] _, _ -> Response in
            guard let sight = overviewSight.withLock({ $0 }) else { return Response(status: .notFound) }
            let canvas = try Canvas(copying: sight.image)
            canvas.overviewPeople(sight.subjects, chosen: sight.chosen)
            let (_, jpeg) = try await encoder.encode(canvas.image, annotation: nil, quality: 70)
            return Response(status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        let wsRouter = Router(context: BasicWebSocketRequestContext.self)
        wsRouter.add(middleware: HostCheck(loopbackOnly: loopback))
        wsRouter.add(middleware: TokenCheck(token: token))
        wsRouter.ws("/ws") { request, _ in
            // A page of another origin (a site the browser also has open) may not steer the dock.
            if let origin = request.headers[.origin], let host = request.head.authority, !Self.sameHost(origin: origin, host: host) {
                return .dontUpgrade
            }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, _ in
            let session = PageSession(TrackControlSession(control: control, identity: identity))
            // However the page goes (a close, a reset, a write that fails, the server stopping),
            // its session ends once: a joystick it held stops and tracking comes back.
            defer { if let words = session.end() { log("page: \(words)") } }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Out: the news, the motion state ten times a second, the run's speed once a
                // second, until the page's server stops (its connections are then closed).
                group.addTask {
                    var nextMotion = 0.0, nextSpeed = 0.0
                    while !Task.isCancelled, !stopping.withLock({ $0 }) {
                        // Of the tracking states since the last turn only the newest: a page shows one at a
                        // time, and a file tracked at full speed makes hundreds a second.
                        var lines = Self.newestTrackingStateOnly(session.pending())
                        let now = MonotonicClock.now()
                        if now >= nextMotion {
                            lines.append(control.motionStateLine)
                            nextMotion = now + 0.1
                        }
                        if now >= nextSpeed {
                            lines.append(control.runSpeedLine)
                            nextSpeed = now + 1
                        }
                        for line in lines { try await outbound.write(.text(line)) }
                        try await Task.sleep(for: .milliseconds(30))
                    }
                }
                // In: the page's requests, answered in order, until it closes.
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case .text(let text) = message, !session.isEnded else { continue }
                        for line in text.split(separator: "\n") {
                            for answer in session.handle(String(line)) { try await outbound.write(.text(answer)) }
                        }
                    }
                }
                // Whichever ends first (the page gone, a write failed, the server stopping) ends both.
                defer { group.cancelAll() }
                try await group.next()
            }
        }
        var logger = Logger(label: "docktrack-page")
        logger.logLevel = .critical
        let bound = Monitor<Result<String, any Error>?>(nil)
        // Every connection passes a guard first (PageLimits): how many at once, how large and
        // slow a request's head, how long silent.
        let registry = ConnectionRegistry(limits: limits, capacity: limits.connections(withDescriptors: ProcessResources.descriptorLimit))
        self.registry = registry
        let webSocketResponder = wsRouter.buildResponder()
        let webSocketConfiguration = WebSocketServerConfiguration(maxFrameSize: 1 << 16,
                                                                  autoPing: .enabled(timePeriod: .milliseconds(Int64(limits.pingSeconds * 1000))))
        let server = HTTPServerBuilder { responder in
            GuardedChannel(inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder,
                                                               configuration: .init(ws: webSocketConfiguration)),
                           registry: registry)
        }
        let app = Application(router: router, server: server,
                              configuration: .init(address: .hostname(host, port: port), serverName: "docktrack"),
                              onServerRunning: { channel in
                                  let port = channel.localAddress?.port ?? port
                                  bound.withLock { $0 = .success("\(host):\(port)") }
                              }, logger: logger)
        let ended = ended
        let running = Task {
            defer { ended.withLock { $0 = true } }
            do {
                try await app.runService(gracefulShutdownSignals: [])
            } catch {
                bound.withLock { if $0 == nil { $0 = .failure(error) } }
                throw error
            }
        }
        task.withLock { $0 = running }
        let outcome = bound.withLock(waitingFor: { $0 != nil }, until: Date(timeIntervalSinceNow: 10)) { state, _ in state }
        switch outcome {
        case .success(let address)?:
            self.address = address
        case .failure(let error)?:
            throw ControlPageError("--http \(host):\(port): \(error)")
        case nil:
            running.cancel()
            throw ControlPageError("--http \(host):\(port): the server did not start within 10 s")
        }
    }

    /// `lines` with every tracking state but the last left out (answers and news all kept, in order).
    static func newestTrackingStateOnly(_ lines: [String]) -> [String] {
        let prefix = #"{"type":"trackingState""#
        guard let newest = lines.lastIndex(where: { $0.hasPrefix(prefix) }) else { return lines }
        return lines.indices.filter { $0 == newest || !lines[$0].hasPrefix(prefix) }.map { lines[$0] }
    }

    /// The header that gives a frame's number.
    static let frameNumber = HTTPField.Name("X-Frame")!

    /// Whether a page is waiting for a newer frame: only then is one handed over.
    package var isWatched: Bool { frames.withLock { $0.waiting > 0 } }

    /// The newest frame (`index`: its number) and what to draw on it; an older one waiting is replaced.
    package func offer(_ image: Image, annotation: FrameAnnotation?, index: Int) {
        frames.withLock { frames in
            frames.index = index
            frames.image = image
            frames.annotation = annotation
        }
    }

    /// The overview camera's newest picture, its people and the one followed (`track --overview`).
    package func offerOverview(_ image: Image, subjects: [TrackedSubject], chosen: UUID?) {
        overviewSight.withLock { $0 = OverviewSight(image: image, subjects: subjects, chosen: chosen) }
    }

    /// Ends the server and waits for it (at most ``stopPatience`` seconds): when this returns,
    /// its pages are closed and its port is free. Not to be called from a task of Swift's
    /// concurrency pool (it waits on a lock): the run calls it from its own thread.
    package func stop() {
        stopping.withLock { $0 = true }
        task.withLock { $0?.cancel() }
        registry.closeAll()
        encoder.stop()
        ended.wait(for: { $0 }, until: Date(timeIntervalSinceNow: Self.stopPatience))
    }

    deinit { stop() }

    /// Whether a WebSocket's `Origin` (`http://host:port`) names the host it was sent to, by
    /// the page's own scheme (the page is served over plain HTTP: an `https://` origin is
    /// another site).
    static func sameHost(origin: String, host: String) -> Bool {
        guard let url = URL(string: origin), url.scheme?.lowercased() == "http", let originHost = url.host else { return false }
        let originAuthority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return originAuthority.lowercased() == host.lowercased()
    }

    /// Whether `host` is this machine's own loopback address (no token needed there). Other
    /// 127.x addresses need one too: they are where a test stands in for a network.
    package static func isLoopback(_ host: String) -> Bool { HTTPRequestHeads.isLoopbackHost(host) }

    /// The token in `file`: its first line without the spaces and line ending around it (CRLF
    /// too), at least 16 characters.
    package static func readToken(_ file: String) throws -> String {
        let text: String
        do {
            text = try SmallTextFile.read(file, largest: 64 * 1024)
        } catch {
            throw ControlPageError("--http-token-file \(file): \(error.reason)")
        }
        let line = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        guard line.count >= 16 else {
            throw ControlPageError("--http-token-file \(file): its first line holds no token of 16 characters or more")
        }
        return line
    }

    /// The address a browser opens for a page bound at `bound` (`host:port`): a wildcard
    /// (0.0.0.0, ::) is every address of this machine, so its name is given instead.
    package static func addressToOpen(_ bound: String) -> String {
        guard let colon = bound.lastIndex(of: ":") else { return bound }
        let host = String(bound[..<colon]), port = bound[bound.index(after: colon)...]
        if host == "0.0.0.0" || host == "::" || host == "[::]" {
            return "\(ProcessInfo.processInfo.hostName):\(port)"
        }
        return host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : bound
    }
}

/// The control page could not be served.
package struct ControlPageError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// Refuses every request without the token (when there is one): 401, nothing else said. The
/// token is compared byte by byte (its UTF-8, no Unicode equivalence: another spelling of it
/// is another token), in a time that does not depend on where they differ.
struct TokenCheck<Context: RequestContext>: RouterMiddleware {
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token else { return try await next(request, context) }
        guard ConstantTime.equal(request.uri.queryParameters.get("token"), token) else {
            return Response(status: .unauthorized, headers: [.contentType: "text/plain"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "a token is needed: open the address docktrack printed\n")))
        }
        return try await next(request, context)
    }
}

/// On a loopback address, refuses a request whose `Host` is not a loopback name (421): a
/// site the user visits can point its own name at 127.0.0.1 and send requests there, but
/// they carry its name.
struct HostCheck<Context: RequestContext>: RouterMiddleware {
    let loopbackOnly: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard loopbackOnly, !HTTPRequestHeads.isLoopbackAuthority(request.head.authority) else { return try await next(request, context) }
        return Response(status: .misdirectedRequest, headers: [.contentType: "text/plain"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: "open the page as http://127.0.0.1:PORT/ or http://localhost:PORT/\n")))
    }
}

/// One page's session on the control path, shared by its reading and writing sides.
final class PageSession: Sendable {
    private struct State {
        var session: TrackControlSession
        var ended = false
    }
    private let state: Mutex<State>

    init(_ session: TrackControlSession) { self.state = Mutex(State(session: session)) }

    /// The answers to one line from the page (none once the session has ended).
    func handle(_ line: String) -> [String] {
        state.withLock { $0.ended ? [] : $0.session.handle(line, at: MonotonicClock.now()) }
    }

    func pending() -> [String] { state.withLock { $0.ended ? [] : $0.session.pendingLines() } }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// The page went: a joystick it held stops (system tracking comes back on if it had
    /// switched it off). What happened, the first time; nil after.
    func end() -> String? {
        state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return state.session.sessionEnded(at: MonotonicClock.now())
        }
    }
}
