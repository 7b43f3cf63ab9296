import Foundation

/// A request's `id`, as in JSON-RPC: an integer or a string the client chooses. Every reply and
/// error that answers the request carries it back, so a client with several requests in flight
/// knows which one each answer is for.
public enum RequestID: Sendable, Hashable, CustomStringConvertible {
    case number(Int)
    case text(String)

    public var description: String {
        switch self {
        case .number(let n): String(n)
        case .text(let t): JSONLine.quoted(t)
        }
    }

    /// `line` (one JSON object) with this id added first: `{"id":7,"command":…}`. The one place
    /// an id goes on a line: a client's request here, an answer through ``DockAnswer`` only.
    public func tagging(_ line: String) -> String {
        guard line.hasPrefix("{") else { return line }
        let rest = line.dropFirst()
        return "{\"id\":\(description)" + (rest.hasPrefix("}") ? "" : ",") + rest
    }
}

extension RequestID: Decodable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) { self = .number(n) } else { self = .text(try c.decode(String.self)) }
    }
}

/// Something a dock or a tracker answers: a request, or a line that was meant as one (its
/// ``DockRequest/Failure``), with the id its sender gave it.
package protocol AnsweredRequest {
    var id: RequestID? { get }
}

/// The lines that answer one request, made from that request and nothing else: each carries the
/// request's id first, when it had one (the dock protocol's rule, JSON-RPC's). Servers answer
/// through this type only, so an answer cannot be made without the request it answers, nor
/// given another request's id.
package struct DockAnswer: Sendable, Equatable {
    package let lines: [String]

    /// `bodies` (JSON objects, without an id) answering `request`.
    package init(to request: some AnsweredRequest, _ bodies: [String]) {
        lines = request.id.map { id in bodies.map(id.tagging) } ?? bodies
    }
}

/// One request line of the dock protocol, parsed once: what the session answers and what a
/// server decides on (who may open a session), never the raw text.
package struct DockRequest: Sendable, Equatable, AnsweredRequest {
    package enum Kind: Sendable, Equatable {
        /// `{"type":"hello","protocols":[…]}`
        case hello(protocols: [String])
        /// `{"command":"getMotionState"}`, `getBattery`, `getLimits`, `getAccessory`; from a
        /// tracker, `getSystemTracking`, `getFramingMode`, `getRegionOfInterest`.
        case query(String)
        /// A command in the form of ``DockCommand/jsonLine(time:)``.
        case command(DockCommand)
        /// A request to the tracker (``TrackingRequest``): framing mode, region, selection.
        case tracking(TrackingRequest)
    }

    package static let queries = Set(["getMotionState", "getBattery", "getLimits", "getAccessory"]).union(trackerQueries)
    /// What only a tracker answers (DockKit's `isSystemTrackingEnabled`, `framingMode`,
    /// `regionOfInterest`, AVAudioSession's `currentRoute`); a dock alone says it is not capable
    /// (docksim answers its own tracking switch).
    package static let trackerQueries: Set<String> = ["getSystemTracking", "getFramingMode", "getRegionOfInterest", "getAudioRoute"]

    package var kind: Kind
    /// The line's own `"time"` (seconds, the sender's clock), when it has a finite one.
    package var time: Double?
    /// The request's `"id"`, when it has one: its answers carry it back.
    package var id: RequestID?

    package init(kind: Kind, time: Double? = nil, id: RequestID? = nil) {
        self.kind = kind
        self.time = time
        self.id = id
    }

    /// A line that is no request: the error its sender gets back, and the line's id when one
    /// could be read from it (a command with a bad argument still names its request).
    package struct Failure: Error, Sendable, Equatable, AnsweredRequest {
        package var error: DockError
        package var id: RequestID?

        package init(_ error: DockError, id: RequestID? = nil) {
            self.error = error
            self.id = id
        }
    }

    /// One framed item as a request, or the error its sender gets back; nil for a blank line.
    package static func parse(_ item: LineFramer.Item) -> Result<DockRequest, Failure>? {
        switch item {
        case .tooLong(let bytes):
            return .failure(Failure(.invalidRequest("line of \(bytes) bytes or more; at most \(LineFramer.defaultMaximumLineLength)")))
        case .line(let text):
            guard text.contains(where: { !$0.isWhitespace }) else { return nil }
            do {
                return .success(try DockRequest(parsing: text))
            } catch {
                struct IDOnly: Decodable { var id: RequestID? }
                return .failure(Failure(error, id: (try? JSONDecoder().decode(IDOnly.self, from: Data(text.utf8)))?.id))
            }
        }
    }

    /// Parses one line; a line that is not a request throws the error its sender gets back.
    package init(parsing line: String) throws(DockError) {
        do {
            self = try JSONDecoder().decode(DockRequest.self, from: Data(line.utf8))
        } catch let error as DockError {
            throw error
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw .invalidRequest("not a JSON object")
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw .invalidRequest("not a JSON object")
        } catch {
            throw .invalidRequest(JSONDecoding.describe(error))
        }
    }
}

extension DockRequest: Decodable {
    private enum Keys: String, CodingKey { case type, protocols, command, time, id }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        // A time that is not a finite number is no time (the line may still be a request).
        time = (try? c.decodeIfPresent(Double.self, forKey: .time)).flatMap { $0?.isFinite == true ? $0 : nil }
        do {
            id = try c.decodeIfPresent(RequestID.self, forKey: .id)
        } catch {
            throw DockError.invalidRequest("id must be an integer or a string")
        }
        if (try? c.decodeIfPresent(String.self, forKey: .type)) == "hello" {
            kind = .hello(protocols: (try? c.decodeIfPresent([String].self, forKey: .protocols)) ?? [])
            return
        }
        guard let name = try? c.decodeIfPresent(String.self, forKey: .command) else {
            throw DockError.invalidRequest("neither a hello nor a command")
        }
        if Self.queries.contains(name) {
            kind = .query(name)
            return
        }
        if TrackingRequest.names.contains(name) {
            do {
                kind = .tracking(try TrackingRequest(from: decoder))
            } catch let error as DockError {
                throw error
            } catch {
                throw DockError.invalidRequest("bad \(name): \(JSONDecoding.describe(error))")
            }
            return
        }
        do {
            kind = .command(try TimedDockCommand(from: decoder).command)
        } catch {
            throw DockError.invalidRequest("bad \(name): \(JSONDecoding.describe(error))")
        }
    }
}
