import Foundation

/// One request line of the dock protocol, parsed once: what the session answers and what a
/// server decides on (who may open a session), never the raw text.
public struct DockRequest: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `{"type":"hello","protocols":[…]}`
        case hello(protocols: [String])
        /// `{"command":"getMotionState"}`, `getBattery`, `getLimits`, `getAccessory`.
        case query(String)
        /// A command in the form of ``DockCommand/jsonLine(time:)``.
        case command(DockCommand)
    }

    public static let queries: Set<String> = ["getMotionState", "getBattery", "getLimits", "getAccessory"]

    public var kind: Kind
    /// The line's own `"time"` (seconds, the sender's clock), when it has a finite one.
    public var time: Double?

    public init(kind: Kind, time: Double? = nil) {
        self.kind = kind
        self.time = time
    }

    /// One framed item as a request, or the error its sender gets back; nil for a blank line.
    public static func parse(_ item: LineFramer.Item) -> Result<DockRequest, DockError>? {
        switch item {
        case .tooLong(let bytes):
            return .failure(.invalidRequest("line of \(bytes) bytes or more; at most \(LineFramer.defaultMaximumLineLength)"))
        case .line(let text):
            guard text.contains(where: { !$0.isWhitespace }) else { return nil }
            return Result { () throws(DockError) in try DockRequest(parsing: text) }
        }
    }

    /// Parses one line; a line that is not a request throws the error its sender gets back.
    public init(parsing line: String) throws(DockError) {
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
    private enum Keys: String, CodingKey { case type, protocols, command, time }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        // A time that is not a finite number is no time (the line may still be a request).
        time = (try? c.decodeIfPresent(Double.self, forKey: .time)).flatMap { $0?.isFinite == true ? $0 : nil }
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
        do {
            kind = .command(try TimedDockCommand(from: decoder).command)
        } catch {
            throw DockError.invalidRequest("bad \(name): \(JSONDecoding.describe(error))")
        }
    }
}
