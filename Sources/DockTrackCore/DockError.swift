import Foundation

/// Errors a caller of a dock can act on (DockKit's).
public enum DockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dock lacks the capability (an axis, animations, ...).
    case notCapable(String)
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

    /// The error's name on the wire.
    public var code: String {
        switch self {
        case .notCapable: "notCapable"
        case .invalidRequest: "invalidRequest"
        case .invalidated: "invalidated"
        case .notConnected: "notConnected"
        case .rateTooHigh: "rateTooHigh"
        case .rateTooLow: "rateTooLow"
        case .noSubjectFound: "noSubjectFound"
        }
    }

    public var description: String {
        switch self {
        case .notCapable(let what): "not capable: \(what)"
        case .invalidRequest(let why): "invalid request: \(why)"
        case .invalidated: "invalidated: the dock went away; register again"
        case .notConnected: "not connected to a dock"
        case .rateTooHigh(let limit): String(format: "rate too high: at most %g per second", limit)
        case .rateTooLow(let limit): String(format: "rate too low: at least %g per second", limit)
        case .noSubjectFound: "no subject found at that point"
        }
    }
}
