import Foundation

/// Finds where each request's head ends in the bytes a peer sends a server (the blank line
/// after the headers), holding at most `maximumBytes` of an unfinished head: what the control
/// page's connection guard reads before the HTTP parser does, so that no head, however large
/// or slow, is held past its budget. After a head that asks for an upgrade (a WebSocket) the
/// bytes are no longer HTTP and are passed over.
package struct HTTPRequestHeads: Sendable {
    /// What came of the bytes given to ``append(_:)``.
    package enum Event: Equatable, Sendable {
        /// A whole head (request line and headers, the blank line included).
        case head([UInt8])
        /// The head grew past ``maximumBytes`` without ending: the peer is to be refused.
        case tooLarge
    }

    package let maximumBytes: Int
    /// Bytes of the head being read.
    package private(set) var pending: [UInt8] = []
    /// Whether a head asked for an upgrade: what follows is the upgraded protocol's.
    package private(set) var upgraded = false
    /// Whether the head was too large: nothing more is read.
    package private(set) var refused = false

    package init(maximumBytes: Int) {
        self.maximumBytes = max(4, maximumBytes)
    }

    /// Whether part of a head has come and its end has not.
    package var isInHead: Bool { !pending.isEmpty }

    /// Reads `bytes`; the heads they end, and a refusal when one grew too large.
    package mutating func append<Bytes: Sequence>(_ bytes: Bytes) -> [Event] where Bytes.Element == UInt8 {
        var events: [Event] = []
        for byte in bytes {
            if upgraded || refused { break }
            pending.append(byte)
            if pending.count > maximumBytes {
                refused = true
                pending = []
                events.append(.tooLarge)
                break
            }
            if pending.count == 2 && pending == [13, 10] {
                pending = []  // a blank line between requests
            } else if pending.count >= 4 && pending[pending.count - 4] == 13 && pending[pending.count - 3] == 10
                        && pending[pending.count - 2] == 13 && pending[pending.count - 1] == 10 {
                events.append(.head(pending))
                if Self.asksForUpgrade(pending) { upgraded = true }
                pending = []
            }
        }
        return events
    }

    /// Whether a head's request line is three parts of visible ASCII (method, target, version
    /// `HTTP/1.x`) split by single spaces: what the HTTP parser reads. Raw bytes above 126 in
    /// the path, control bytes or a missing version are not.
    package static func hasReadableRequestLine(_ head: [UInt8]) -> Bool {
        guard let end = head.firstIndex(of: 13) else { return false }
        let parts = head[..<end].split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (33...126).contains($0) } }) else { return false }
        return Array(parts[2]).starts(with: Array("HTTP/1.".utf8))
    }

    /// Whether a head has an `Upgrade` header.
    package static func asksForUpgrade(_ head: [UInt8]) -> Bool {
        String(decoding: head, as: UTF8.self).lowercased().contains("\nupgrade:")
    }

    /// Whether an authority (a `Host` header: `name`, `name:port`, `[v6]:port`) names this
    /// machine's loopback: `localhost`, `127.0.0.1` or `::1`.
    package static func isLoopbackAuthority(_ authority: String?) -> Bool {
        guard var host = authority?.lowercased() else { return false }
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<end])
        } else if let colon = host.lastIndex(of: ":") {
            guard host[host.index(after: colon)...].allSatisfy(\.isASCIIDigit) else { return false }
            host = String(host[..<colon])
        }
        return isLoopbackHost(host)
    }

    /// `localhost`, `127.0.0.1` or `::1` (other 127.x addresses are not: tests stand them in
    /// for a network's).
    package static func isLoopbackHost(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "127.0.0.1"
    }
}

/// Compares secrets (a page's token) byte for byte, in a time that depends only on the
/// expected one's length: no Unicode equivalence (another spelling of a token is another token)
/// and no early exit at the first difference.
package enum ConstantTime {
    package static func equal(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference: UInt8 = a.count == b.count ? 0 : 1
        for i in b.indices { difference |= b[i] ^ (i < a.count ? a[i] : 0) }
        return difference == 0
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
