import Foundation

/// Errors a caller of a dock can act on (DockKit's).
///
/// Keep every payload at most one String: with a case of two Strings, the async calls that
/// throw this type (`throws(DockError)`) crashed at run time here (Swift 6.x: a job with a null
/// function, SIGSEGV in dock-client-example), though all compiled.
public enum DockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dock lacks the capability (an axis, animations, a battery, tracking on a dock
    /// alone): DockKit's `notSupportedByDevice`.
    case notCapable(String)
    /// This run or this platform does not offer the request, whatever the dock (an audio route
    /// where no PipeWire graph is followed, a tap on an overview camera the run has not got, a
    /// protocol the server does not speak): DockKit's `notSupported`.
    case notSupported(String)
    /// The request is malformed or out of range.
    case invalidRequest(String)
    /// The dock went away: register again when it comes back.
    case invalidated
    /// No dock is connected.
    case notConnected
    /// More requests per second than allowed.
    case rateTooHigh(limit: Double)
    /// Fewer requests per second than needed.
    case rateTooLow(limit: Double)
    /// Nobody at the point given for a selection.
    case noSubjectFound
    /// Another client holds the dock's session (one at a time): connect again once it has gone.
    case sessionInUse
    /// An error none of these is: a newer dock's code, with its words (DockKit has no such case;
    /// a `switch` over DockKitError needs its `@unknown default`, which this stands for).
    case unknown(String)

    /// The error's name on the wire.
    public var code: String {
        switch self {
        case .notCapable: "notCapable"
        case .notSupported: "notSupported"
        case .invalidRequest: "invalidRequest"
        case .invalidated: "invalidated"
        case .notConnected: "notConnected"
        case .rateTooHigh: "rateTooHigh"
        case .rateTooLow: "rateTooLow"
        case .noSubjectFound: "noSubjectFound"
        case .sessionInUse: "sessionInUse"
        case .unknown: "unknown"
        }
    }

    public var description: String {
        switch self {
        case .notCapable(let what): "not capable: \(what)"
        case .notSupported(let what): "not supported: \(what)"
        case .invalidRequest(let why): "invalid request: \(why)"
        case .invalidated: "invalidated: the dock went away; register again"
        case .notConnected: "not connected to a dock"
        case .rateTooHigh(let limit): String(format: "rate too high: at most %g per second", limit)
        case .rateTooLow(let limit): String(format: "rate too low: at least %g per second", limit)
        case .noSubjectFound: "no subject found at that point"
        case .sessionInUse: "session in use: a session is already open on this dock (one client at a time)"
        case .unknown(let what): "unknown: \(what)"
        }
    }
}
