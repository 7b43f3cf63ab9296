import DockTrackCore
import DockTrackSystem
import Foundation

/// What answers the dock protocol behind a ``DockSocketServer``: a dock (``DockSession``: the
/// simulator, or a device bridged through it), or a tracker in front of a dock (`docktrack
/// track --serve`). Pure logic on the server's clock; the server owns the sockets.
package protocol DockEndpoint {
    /// Whether a client has opened the session (said hello or sent a request).
    var hasSession: Bool { get }
    /// Whether the client may hold a session now (a dock with the phone taken off: no).
    var isDocked: Bool { get }
    /// The answers to one request (parsed, or the error its parsing gave; nil: a blank line)
    /// received at `time`, each carrying the request's id when it has one.
    mutating func handle(_ parsed: Result<DockRequest, DockRequest.Failure>?, at time: Double) -> [String]
    /// Moves on to `time`; the events on the way, for every client.
    mutating func advance(to time: Double) -> [String]
    /// The motion state the session's owner gets on the server's state interval.
    func motionStateLine() -> String
    /// Lines for the session's owner that came up since the last call, between requests
    /// (tracking states; answers to requests carried out later).
    mutating func pendingLines() -> [String]
    /// The owner hung up at `time`: the session ends (a dock stops its motors). Returns what
    /// became of it, for the server's log.
    mutating func sessionEnded(at time: Double) -> String
    /// One line of the server's --trace, if it keeps one.
    func writeTrace(to trace: OutputFile?) throws(OutputFile.CannotWrite)
    /// After the session ended at `time`: the trace of the motors coming to rest, so that a
    /// trace ends with the dock still (a tracker in front of a dock keeps none).
    mutating func traceComingToRest(after time: Double, to trace: OutputFile?) throws(OutputFile.CannotWrite)
}

extension DockEndpoint {
    package mutating func traceComingToRest(after time: Double, to trace: OutputFile?) throws(OutputFile.CannotWrite) {}
}

extension DockEndpoint {
    /// Answers one request line received at `time`. Every line gets its answers here; a
    /// malformed one gets an error naming its line number.
    package mutating func handle(_ text: String, at time: Double) -> [String] {
        handle(DockRequest.parse(.line(text)), at: time)
    }

    /// Answers one framed item of the byte stream: a line, or one too long to read.
    package mutating func handle(_ item: LineFramer.Item, at time: Double) -> [String] {
        handle(DockRequest.parse(item), at: time)
    }
}

extension DockSession: DockEndpoint {
    package mutating func pendingLines() -> [String] { [] }

    /// The dock stopped, and what the client set for its session given back (DockKit's limits
    /// and system tracking last one app's session): the dock's own limits, system tracking on.
    package mutating func sessionEnded(at time: Double) -> String {
        _ = handle(.success(DockRequest(kind: .command(.setAngularVelocity(.zero)))), at: time)
        let given = dock.limits != dock.hardwareLimits || !dock.systemTracking
        _ = handle(.success(DockRequest(kind: .command(.setLimits(dock.hardwareLimits)))), at: time)
        _ = handle(.success(DockRequest(kind: .command(.setSystemTracking(true)))), at: time)
        closeSession()
        return given ? "session closed; dock stopped, its limits and system tracking back" : "session closed; dock stopped"
    }

    /// Lines every 50 ms of the dock's time until it is still (at most 3 s).
    package mutating func traceComingToRest(after time: Double, to trace: OutputFile?) throws(OutputFile.CannotWrite) {
        guard trace != nil else { return }
        var t = time
        while dock.velocity != .zero && t < time + 3 {
            t += 0.05
            _ = advance(to: t)
            try writeTrace(to: trace)
        }
    }
}
