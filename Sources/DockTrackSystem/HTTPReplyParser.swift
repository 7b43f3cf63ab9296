import Foundation

/// An HTTP/1.1 reply read from bytes as they arrive, within a budget: the one place a reply from
/// a peer (an ONVIF camera) is parsed. A reply larger than ``maximumBytes`` (headers and body,
/// after chunked decoding) is an error as soon as it is seen to be, whatever it says of itself;
/// nothing is kept beyond that budget.
///
/// The body ends where `Content-Length` says, at the last chunk of a chunked body, or when the
/// peer closes the connection (``finish()``).
package struct HTTPReplyParser: Sendable {
    /// A reply as received.
    package struct Reply: Sendable, Equatable {
        package var status: Int
        /// Header names lowercased; a repeated header keeps its last value.
        package var headers: [String: String]
        package var body: [UInt8]
    }

    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// More than the budget.
        case tooLarge(maximum: Int)
        /// Not HTTP, or broken framing.
        case malformed(String)
        /// The peer closed the connection before the reply was whole.
        case truncated

        package var description: String {
            switch self {
            case .tooLarge(let maximum): "the reply is larger than \(maximum) bytes"
            case .malformed(let why): "not an HTTP reply (\(why))"
            case .truncated: "the reply ended early"
            }
        }
    }

    /// The most bytes a reply may take (headers and body).
    package let maximumBytes: Int
    /// The longest header section.
    package static let maximumHeaderBytes = 64 << 10

    private enum Stage: Sendable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private var stage = Stage.head
    private var buffer: [UInt8] = []
    private var status = 0
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []
    private var headBytes = 0

    package init(maximumBytes: Int) {
        self.maximumBytes = max(0, maximumBytes)
    }

    /// Whether the reply is whole.
    package var isComplete: Bool {
        if case .done = stage { return true }
        return false
    }

    /// The reply, once whole.
    package var reply: Reply? { isComplete ? Reply(status: status, headers: headers, body: body) : nil }

    /// Takes the next bytes received; true when the reply is whole (bytes after it are ignored).
    @discardableResult
    package mutating func append<Bytes: Collection>(_ bytes: Bytes) throws(Failure) -> Bool where Bytes.Element == UInt8 {
        if isComplete { return true }
        buffer.append(contentsOf: bytes)
        try advance()
        return isComplete
    }

    /// The peer closed the connection: a body read until close ends here.
    package mutating func finish() throws(Failure) -> Reply {
        if case .untilClose = stage {
            body.append(contentsOf: buffer)
            buffer = []
            try checkBudget()
            stage = .done
        }
        guard let reply else { throw .truncated }
        return reply
    }

    private func checkBudget() throws(Failure) {
        if headBytes + body.count > maximumBytes { throw .tooLarge(maximum: maximumBytes) }
    }

    /// The index just past the next CRLF (or bare LF) in the buffer, and the line before it.
    private func line() -> (String, Int)? {
        guard let lf = buffer.firstIndex(of: 0x0A) else { return nil }
        var end = lf
        if end > 0 && buffer[end - 1] == 0x0D { end -= 1 }
        return (String(decoding: buffer[..<end], as: UTF8.self), lf + 1)
    }

    private mutating func advance() throws(Failure) {
        while true {
            switch stage {
            case .done:
                return
            case .head:
                guard let (text, next) = line() else {
                    if headBytes + buffer.count > Self.maximumHeaderBytes || headBytes + buffer.count > maximumBytes {
                        throw .tooLarge(maximum: min(maximumBytes, Self.maximumHeaderBytes))
                    }
                    return
                }
                buffer.removeFirst(next)
                headBytes += next
                if headBytes > Self.maximumHeaderBytes || headBytes > maximumBytes {
                    throw .tooLarge(maximum: min(maximumBytes, Self.maximumHeaderBytes))
                }
                if status == 0 {
                    try statusLine(text)
                } else if text.isEmpty {
                    try startBody()
                } else {
                    guard let colon = text.firstIndex(of: ":") else { throw .malformed("a header line without a colon") }
                    headers[text[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] =
                        text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
            case .fixed(let remaining):
                let take = min(remaining, buffer.count)
                body.append(contentsOf: buffer.prefix(take))
                buffer.removeFirst(take)
                try checkBudget()
                if take == remaining { stage = .done } else { stage = .fixed(remaining: remaining - take); return }
            case .chunkSize:
                guard let (text, next) = line() else {
                    if buffer.count > 1024 { throw .malformed("a chunk size line of more than 1024 bytes") }
                    return
                }
                buffer.removeFirst(next)
                let digits = text.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
                guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16), size >= 0 else {
                    throw .malformed("a chunk size that is not a number")
                }
                if headBytes + body.count + size > maximumBytes { throw .tooLarge(maximum: maximumBytes) }
                stage = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                let take = min(remaining, buffer.count)
                body.append(contentsOf: buffer.prefix(take))
                buffer.removeFirst(take)
                if take == remaining { stage = .chunkDataEnd } else { stage = .chunkData(remaining: remaining - take); return }
            case .chunkDataEnd:
                guard let (text, next) = line() else {
                    if buffer.count > 2 { throw .malformed("a chunk longer than its size") }
                    return
                }
                guard text.isEmpty else { throw .malformed("a chunk longer than its size") }
                buffer.removeFirst(next)
                stage = .chunkSize
            case .trailers:
                guard let (text, next) = line() else {
                    if buffer.count > 8192 { throw .tooLarge(maximum: maximumBytes) }
                    return
                }
                buffer.removeFirst(next)
                headBytes += next
                try checkBudget()
                if text.isEmpty { stage = .done }
            case .untilClose:
                body.append(contentsOf: buffer)
                buffer = []
                try checkBudget()
                return
            }
        }
    }

    private mutating func statusLine(_ text: String) throws(Failure) {
        let parts = text.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]), (100...599).contains(code) else {
            throw .malformed("the first line is not an HTTP status line")
        }
        status = code
    }

    private mutating func startBody() throws(Failure) {
        if (100..<200).contains(status) {
            // An interim reply (100 Continue): the real one follows.
            status = 0
            headers = [:]
            return
        }
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            stage = .chunkSize
        } else if let length = headers["content-length"] {
            guard let count = Int(length), count >= 0 else { throw .malformed("a Content-Length that is not a number") }
            // Compared without adding: a length near Int.max must not overflow.
            if count > maximumBytes - headBytes { throw .tooLarge(maximum: maximumBytes) }
            stage = count == 0 ? .done : .fixed(remaining: count)
        } else if status == 204 || status == 304 {
            stage = .done
        } else {
            stage = .untilClose
        }
    }
}
