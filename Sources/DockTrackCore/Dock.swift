import Foundation

/// A pan/tilt dock as the frame loop drives it: it says how it moves at a time, and takes
/// commands. The in-process simulator, the command stream on stdout, a dummy for tests and the
/// device back ends are docks.
///
/// Times are seconds on the frame clock (a video's presentation time, a camera's capture
/// clock). A dock that cannot say where it points answers from its model of the motors.
public protocol Dock {
    /// The dock's motion at `time`: where it points and how fast it turns.
    mutating func motion(at time: Double) throws -> MotionState
    /// Takes `command`, issued at `time`. A ``DockError`` is the dock refusing the command (out
    /// of its rate, not capable); any other error means the dock can no longer be reached.
    mutating func perform(_ command: DockCommand, at time: Double) throws
    /// Takes a client's `command`, issued at `time`, and calls `answered` once the dock has
    /// answered that command itself: `nil` when it took it, its refusal otherwise. A dock that
    /// answers as it takes a command (a model, a device driven here) calls it before returning;
    /// a dock in another process calls it when its answer to this very request arrives (matched
    /// by the request's id, never by order). Throws only when the dock can no longer be reached.
    mutating func perform(_ command: DockCommand, at time: Double, answered: @escaping @Sendable (DockError?) -> Void) throws
    /// Seconds from a command to the motors answering it, as far as the dock knows (measured
    /// from its motion states for a device or a dock in another process; 0 for a model).
    var commandLatency: Double { get }
    /// Waits up to `timeout` seconds for the commands taken so far to reach the motors (a dock
    /// that sends them on a thread of its own); at the end of a run, so that its last command
    /// (stop) is not lost with the process.
    mutating func settle(timeout: Double)
    /// The camera's zoom, when the dock's camera zooms (an ONVIF PTZ camera): framing zooms
    /// through it; `nil` for a dock without one.
    var zooming: (any ZoomingDock)? { get }
    /// The limits the dock itself says it has (a dock in another process, in its hello); `nil`
    /// when it says none.
    var reportedLimits: DockLimits? { get }
}

extension Dock {
    public mutating func perform(_ command: DockCommand, at time: Double, answered: @escaping @Sendable (DockError?) -> Void) throws {
        do {
            try perform(command, at: time)
        } catch let refusal as DockError {
            answered(refusal)
            return
        }
        answered(nil)
    }
    public var commandLatency: Double { 0 }
    public mutating func settle(timeout: Double) {}
    public var zooming: (any ZoomingDock)? { nil }
    public var reportedLimits: DockLimits? { nil }
}

/// A dock's camera that zooms, as framing sees it: in magnifications (1 at the widest).
public protocol ZoomingDock: AnyObject {
    /// The magnification now (the zoom last sent or read).
    var magnification: Double { get }
    /// Zooms to `magnification` (held within what the camera has).
    func zoom(toMagnification magnification: Double) throws(DockError)
}

/// How the framing controller tells the dock where to point.
public enum DockCommandKind: String, Sendable, CaseIterable, Codable {
    /// `setOrientation`: absolute moves to the pose that frames the subject, at most about twice
    /// a second (as the dock protocol, VISCA and UVC allow).
    case orientation
    /// `setAngularVelocity`: continuous motion, a command per frame, driven by the axis
    /// controllers.
    case velocity
}

/// What a dock has, as its hello says it (`"capabilities":["pan","tilt",...]`).
public enum DockCapability: String, Sendable, CaseIterable, Codable {
    case pan, tilt, roll, zoom
    case battery, buttons, animations
    /// The dock's own tracking can be switched off and on.
    case systemTracking
    /// Framing can be set (a tracker in front of the dock: `track --serve`).
    case framing
    /// Tracking states are published per frame (`track --serve`).
    case trackingStates
    /// Gestures are recognized and sent as accessory events (`track --serve --gestures on`).
    case gestures
}
