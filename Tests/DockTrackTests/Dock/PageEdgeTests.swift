import DockTrack
import DockTrackPage
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The control page's server against peers that are not pages: quiet, slow, large, many,
/// from another site; `track --http` in front of docksim, with the server's own limits
/// (``PageLimits``).
@Suite(.earlyOnTestThreads) struct PageEdgeTests {
    /// Whether the server closed `client`'s connection within `seconds` (a read of 0 or a reset).
    static func closed(_ client: RawHTTPClient, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var fds = [pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 100) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            if read(client.fd, &chunk, chunk.count) <= 0 { return true }
        }
        return false
    }

    /// Whether the server has closed `client`'s connection, looking without waiting (what it
    /// sent before is read and dropped).
    static func isClosed(_ client: RawHTTPClient) -> Bool {
        var fds = [pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, 1, 0) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 4096)
        return read(client.fd, &chunk, chunk.count) <= 0
    }

    /// A head too large (one line of 100 KB, or 20,000 small headers) is answered 431 and
    /// closed at once; the server goes on serving.
    @Test func aHeadTooLargeIsRefused() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let port = run.port
        let long = try RawHTTPClient(host: "127.0.0.1", port: port)
        let answer = try long.request("/", headers: ["X-Long": String(repeating: "a", count: 100_000)], within: 5)
        #expect(answer.status == 431, "\(answer.status)")
        #expect(Self.closed(long, within: 2))
        let many = try RawHTTPClient(host: "127.0.0.1", port: port)
        var head = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for i in 0..<20_000 { head += "X-\(i): 1\r\n" }
        try? many.send(Array(head.utf8))
        #expect(Self.closed(many, within: 5), "20,000 headers: closed")
        #expect(try RawHTTPClient(host: "127.0.0.1", port: port).request("/", headers: ["Host": "127.0.0.1"]).status == 200)
        #expect(kill(run.track.pid, 0) == 0)
    }

    /// A connection that sends nothing is closed once idle; one that sends its head a byte at a
    /// time (slow loris) is answered 408 and closed at the head's deadline.
    @Test func silentAndSlowPeersAreClosed() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let port = run.port
        let limits = PageLimits()
        let silent = try RawHTTPClient(host: "127.0.0.1", port: port)
        let slow = try RawHTTPClient(host: "127.0.0.1", port: port)
        let start = Date()
        var slowClosedAfter: Double?
        for byte in Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 100) {
            guard (try? slow.send([byte])) != nil else { slowClosedAfter = Date().timeIntervalSince(start); break }
            if Self.closed(slow, within: 0.5) { slowClosedAfter = Date().timeIntervalSince(start); break }
        }
        let after = try #require(slowClosedAfter, "the slow peer was never closed")
        #expect(after > limits.headSeconds - 1 && after < limits.headSeconds + 2.5, "slow head closed after \(after) s (its limit: \(limits.headSeconds) s)")
        let waited = Date().timeIntervalSince(start)
        #expect(Self.closed(silent, within: limits.idleSeconds + 3 - waited), "a silent connection is closed once idle (\(limits.idleSeconds) s)")
    }

    /// On loopback a request naming another host (a site's name pointed at 127.0.0.1: DNS
    /// rebinding) is refused, page and WebSocket; beyond loopback an https:// origin of the same
    /// host is another site; the token is compared byte for byte.
    @Test func anotherSiteCannotReachThePage() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let port = run.port
        #expect(try RawHTTPClient(host: "127.0.0.1", port: port).request("/", headers: ["Host": "evil.example:\(port)"]).status == 421)
        #expect(try RawHTTPClient(host: "127.0.0.1", port: port).request("/frame.jpg", headers: ["Host": "evil.example"]).status == 421)
        #expect(try RawHTTPClient(host: "127.0.0.1", port: port).upgrade("/ws", host: "evil.example:\(port)", origin: "http://evil.example:\(port)") != 101)
        #expect(try RawHTTPClient(host: "127.0.0.1", port: port).request("/", headers: ["Host": "localhost:\(port)"]).status == 200)
        #expect(try RawHTTPClient(host: "127.0.0.1", port: port).upgrade("/ws", host: "127.0.0.1:\(port)", origin: "http://127.0.0.1:\(port)") == 101)

        // Beyond loopback, with a token file written on Windows (CRLF) holding a token with an é.
        let token = "caf\u{E9}-0123456789abcdef"
        let file = try Fixtures.temporaryFolder().appendingPathComponent("token")
        try Data((token + "\r\nsecond line\r\n").utf8).write(to: file)
        let away = try TrackProcess([Fixtures.sample("vtest.avi"), "--loop", "-d", "fast", "--no-face-cues", "--http", "127.0.0.2:0",
                                     "--http-token-file", file.path])
        defer { withExtendedLifetime(away) {} }
        let (_, awayPort, printed) = try ControlPageTests.address(away)
        #expect(printed == nil && !away.stderr.contains("0123456789abcdef"), "a token from a file is not printed: \(away.stderr)")
        let host = "127.0.0.2:\(awayPort)"
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let nfd = token.decomposedStringWithCanonicalMapping.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(nfd != encoded)
        #expect(try RawHTTPClient(host: "127.0.0.2", port: awayPort).request("/?token=\(encoded)", headers: ["Host": host]).status == 200,
                "the token is the first line without its CRLF")
        #expect(try RawHTTPClient(host: "127.0.0.2", port: awayPort).request("/?token=\(nfd)", headers: ["Host": host]).status == 401,
                "another Unicode spelling of the token is not the token")
        #expect(try RawHTTPClient(host: "127.0.0.2", port: awayPort).upgrade("/ws?token=\(encoded)", host: host, origin: "https://\(host)") != 101)
        #expect(try RawHTTPClient(host: "127.0.0.2", port: awayPort).upgrade("/ws?token=\(encoded)", host: host, origin: "http://\(host)") == 101)
    }

    /// A token file that is not there is said to be missing; one too short, too short.
    @Test func aMissingTokenFileIsSaidToBeMissing() throws {
        let missing = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--http", "127.0.0.2:0", "--http-token-file", "/nonexistent/token"])
        #expect(missing.status != 0 && missing.stderr.contains("/nonexistent/token: no such file"), "\(missing.stderr)")
    }

    /// A client that sends one velocity and then says nothing more, its connection left open:
    /// the dock (docksim in another process) stops within about a second, as the protocol says.
    @Test func aQuietPageStopsTheDock() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let ws = try RawHTTPClient(host: run.host, port: run.port)
        #expect(try ws.upgrade("/ws", host: "\(run.host):\(run.port)", origin: "http://\(run.host):\(run.port)") == 101)
        try ws.sendText(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        try ws.sendText(#"{"command":"setSystemTracking","enabled":false}"#)
        try ws.sendText(#"{"id":1,"command":"setAngularVelocity","velocity":{"x":0,"y":1,"z":0}}"#)
        #expect(ws.firstText(within: 10) { $0.hasPrefix(#"{"id":1,"#) } != nil)
        let given = Date()
        var turning: [(Double, Double)] = []  // seconds since the command, rad/s
        while Date().timeIntervalSince(given) < 5 {
            if case .motionState(let m)? = ws.firstText(within: 1, where: { $0.hasPrefix(#"{"type":"motionState""#) }).flatMap(DockMessage.init(line:)) {
                turning.append((Date().timeIntervalSince(given), m.velocity.y))
            }
        }
        #expect(turning.contains { $0.1 > 0.5 }, "it turned at first: \(turning)")
        let stillFrom = turning.last { abs($0.1) > 0.05 }?.0 ?? 0
        #expect(stillFrom < 2.5, "turning until \(stillFrom) s after the last word from the page")
        // Still, as the tracker's motion states keep saying (a run that stopped sending them would
        // pass a check over no states at all).
        let late = turning.filter { $0.0 > 3 }
        #expect(late.count >= 3, "motion states kept coming after 3 s: \(late.count)")
        #expect(late.allSatisfy { abs($0.1) < 0.05 }, "still after 3 s: \(turning.suffix(5))")
    }

    /// `track --http` with few descriptors (ulimit -n 256) and 300 connections held open: the
    /// run goes on, and a page is served once the silent ones have waited out their time.
    @Test func manyConnectionsDoNotTakeTheTracker() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let limited = try ToolRun.run("/usr/bin/prlimit", ["--pid", "\(run.track.pid)", "--nofile=256:256"])
        #expect(limited.status == 0, "\(limited.stderr)")
        var held: [RawHTTPClient] = []
        for _ in 0..<300 { if let c = try? RawHTTPClient(host: run.host, port: run.port) { held.append(c) } }
        // A visitor asks again and again until served (at the latest once the silent ones have
        // waited out their time), the tracker alive all along.
        var page = (status: 0, headers: [String: String](), body: [UInt8]())
        let served = waitWhile(atMost: .seconds(Int64(PageLimits().headSeconds) + 60), every: .milliseconds(250)) {
            #expect(kill(run.track.pid, 0) == 0, "the tracker is alive: \(run.track.stderr.suffix(400))")
            page = (try? RawHTTPClient(host: run.host, port: run.port).request("/", headers: ["Host": "\(run.host):\(run.port)"], within: 5)) ?? page
            return page.status != 200 && kill(run.track.pid, 0) == 0
        }
        #expect(served && page.status == 200, "served past 300 idle connections: \(page.status)")
        #expect(kill(run.track.pid, 0) == 0 && !run.track.stderr.contains("Fatal error"), "\(run.track.stderr.suffix(400))")
        withExtendedLifetime(held) {}
    }

    /// 100 peers that each send a byte of their head a second and reconnect at once when closed
    /// (a slow-loris crowd, all from this address) do not lock visitors out: each new visitor
    /// takes the place of the slowest of them. Over 12 s a visitor every 0.3 s is served 95% of
    /// the time or more (before: 8 of 78 over 40 s, lockouts of about 9.5 s).
    @Test func slowPeersThatReconnectDoNotStarveVisitors() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let (host, port) = (run.host, run.port)
        let stop = Monitor(false)
        let crowd = Thread {
            var peers: [RawHTTPClient?] = Array(repeating: nil, count: 100)
            var sent = Array(repeating: 0, count: 100)
            let head = Array("GET / HTTP/1.1\r\nHost: \(host)\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 1000)
            while !stop.withLock({ $0 }) {
                for i in peers.indices {
                    if peers[i] == nil || PageEdgeTests.isClosed(peers[i]!) {
                        peers[i] = try? RawHTTPClient(host: host, port: port)
                        sent[i] = 0
                    }
                    if let peer = peers[i], (try? peer.send([head[sent[i] % head.count]])) != nil { sent[i] += 1 } else { peers[i] = nil }
                }
                Thread.sleep(forTimeInterval: 1)
            }
        }
        crowd.start()
        defer { stop.withLock { $0 = true } }
        Thread.sleep(forTimeInterval: 2)
        var served = 0, tries = 0
        let end = Date().addingTimeInterval(12)
        while Date() < end {
            tries += 1
            if let visitor = try? RawHTTPClient(host: host, port: port),
               (try? visitor.request("/", headers: ["Host": "\(host):\(port)"], within: 2))?.status == 200 { served += 1 }
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(Double(served) >= 0.95 * Double(tries), "served \(served) of \(tries)")
        #expect(kill(run.track.pid, 0) == 0)
    }

    /// A request line the HTTP parser cannot read (raw bytes in the path) is answered 400 and
    /// closed at once, not held for the idle time.
    @Test func anUnreadableRequestLineIsAnsweredAndClosed() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        let peer = try RawHTTPClient(host: run.host, port: run.port)
        try peer.send(Array("GET /".utf8) + [0xFF, 0xFE, 0x80] + Array(" HTTP/1.1\r\nHost: \(run.host)\r\n\r\n".utf8))
        var reply = [UInt8](repeating: 0, count: 256)
        var fds = [pollfd(fd: peer.fd, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 5000) > 0)
        let count = read(peer.fd, &reply, reply.count)
        #expect(count > 0 && String(decoding: reply.prefix(max(0, count)), as: UTF8.self).hasPrefix("HTTP/1.1 400"), "\(count) bytes")
        #expect(Self.closed(peer, within: 2))
        #expect(HTTPRequestHeads.hasReadableRequestLine(Array("GET /a%20b?c=1 HTTP/1.1\r\n\r\n".utf8)))
        #expect(!HTTPRequestHeads.hasReadableRequestLine(Array("GET /a b HTTP/1.1\r\n\r\n".utf8)))
        #expect(!HTTPRequestHeads.hasReadableRequestLine(Array("GET /\u{7}x HTTP/1.1\r\n\r\n".utf8)))
    }

    /// Two pages open: one switches tracking off, the other hears it (both show the same),
    /// and hears it back on when the first goes.
    @Test func twoPagesAgreeOnWhetherTrackingIsOn() throws {
        let run = try PageRun()
        defer { withExtendedLifetime(run) {} }
        func page() throws -> RawHTTPClient {
            let ws = try RawHTTPClient(host: run.host, port: run.port)
            #expect(try ws.upgrade("/ws", host: "\(run.host):\(run.port)", origin: "http://\(run.host):\(run.port)") == 101)
            try ws.sendText(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
            #expect(ws.firstText(within: 10) { $0.hasPrefix(#"{"type":"hello""#) } != nil)
            return ws
        }
        let first = try page(), second = try page()
        try first.sendText(#"{"command":"setSystemTracking","enabled":false}"#)
        #expect(second.firstText(within: 10) { $0 == #"{"type":"systemTracking","enabled":false}"# } != nil, "the other page hears tracking off")
        first.hangUp()
        #expect(second.firstText(within: 20) { $0 == #"{"type":"systemTracking","enabled":true}"# } != nil, "and back on when the first page goes")
    }

    /// `--http [::]:0` binds every address (it failed with UnknownHost) and prints an address
    /// a browser can open: the machine's name, not the wildcard.
    @Test func aWildcardAddressIsBoundAndPrintedAsTheHostsName() throws {
        let track = try TrackProcess([Fixtures.sample("vtest.avi"), "--loop", "-d", "fast", "--no-face-cues", "--http", "[::]:0"])
        defer { withExtendedLifetime(track) {} }
        let deadline = Date().addingTimeInterval(30)
        waitWhile(until: deadline, every: .milliseconds(100)) { !track.stderr.contains("control page: http://") }
        let line = track.stderr.split(separator: "\n").first { $0.contains("control page: http://") }.map(String.init) ?? track.stderr
        #expect(line.contains("http://\(ProcessInfo.processInfo.hostName):") && !line.contains("[::]") && line.contains("?token="), "\(line)")
    }
}
