import DockTrackCore
import Foundation

/// Where the frame loop's dock is, as `--dock` names it: `-` (commands as JSON lines on
/// stdout, today's pipe), `sim` (the simulator, in this process), `unix:PATH` (the dock
/// protocol on a socket: docksim's, or anything that speaks it), or a device:
/// `visca-udp:HOST:PORT`, `visca-serial:DEVICE[@BAUD]`, `uvc:/dev/videoN`, `onvif:HOST:PORT`.
public enum DockAddress: Sendable, Equatable {
    case commandStream
    case simulator
    case socket(path: String)
    case device(String)

    public static let help = "-, sim, unix:PATH, " + DeviceScheme.allCases.map(\.usage).joined(separator: ", ")

    public init(_ text: String) throws(DockError) {
        switch text {
        case "-": self = .commandStream
        case "sim": self = .simulator
        case let t where t.hasPrefix("unix:") && t.count > 5: self = .socket(path: String(t.dropFirst(5)))
        case let t where DeviceScheme(of: t) != nil:
            self = .device(t)
        default: throw .invalidRequest("'\(text)' is not a dock address (\(Self.help))")
        }
    }

    /// Whether the dock runs on the real clock and says where it points (another process, a
    /// device): the frame loop then issues commands at the present time and, for a camera on
    /// the dock, reads the pose at capture from the dock.
    /// A live dock left turning is stopped after this long without a word from its frame loop
    /// (``IdleStop``): 15 frames of a 30 fps camera, 5 of a 10 fps file.
    public static let idleStopSeconds = 0.5

    public var isLive: Bool {
        switch self {
        case .commandStream, .simulator: false
        case .socket, .device: true
        }
    }

    /// Opens the dock. `limits` and `home` are the simulator's and the command stream's model
    /// (which starts at `time`); `clock` is the frame clock of a live dock (and of a command
    /// stream `followedLive`: made from a live camera); `write` takes the
    /// command stream's lines. `device`: a device at this address opened already (to read a
    /// preset), driven instead of opening it again.
    public func open(limits: DockLimits, home: DockOrientation, time: Double = 0, clock: @escaping @Sendable () -> Double,
                     onvif: ONVIFSettings = ONVIFSettings(), followedLive: Bool = false, device opened: sending (any DockHardware)? = nil,
                     write: @escaping @Sendable (String) throws -> Void) throws -> AnyDock {
        switch self {
        case .commandStream:
            var model = SimulatedDock(limits: limits, position: home, time: time)
            // The dock at the other end (docksim) stops a velocity not renewed within a second.
            model.stopsAfterSilence = SimulatedDock.peerSilence
            // Commands from a live camera, which a dock follows as they come: stopped when the
            // frames stop.
            if followedLive { return AnyDock(CommandStreamDock(model: model, stopWhenIdle: Self.idleStopSeconds, clock: clock, write: write)) }
            return AnyDock(CommandStreamDock(model: model, write: write))
        case .simulator:
            return AnyDock(SimulatedDock(limits: limits, position: home, time: time))
        case .socket(let path):
            return AnyDock(try ProtocolDock(path: path, clock: clock, stopWhenIdle: Self.idleStopSeconds))
        case .device(let address):
            let hardware = try opened ?? DockBackend.open(address, onvif: onvif)
            return AnyDock(DeviceDock(hardware: hardware, limits: limits, clock: clock,
                                      asynchronous: DeviceScheme(of: address)?.answersSlowly ?? false, stopWhenIdle: Self.idleStopSeconds))
        }
    }
}

/// Any dock, for a frame loop whose dock is chosen at run time.
public struct AnyDock: Dock {
    public var base: any Dock

    public init(_ base: any Dock) {
        self.base = base
    }

    public mutating func motion(at time: Double) throws -> MotionState { try base.motion(at: time) }
    public mutating func perform(_ command: DockCommand, at time: Double) throws { try base.perform(command, at: time) }
    public mutating func perform(_ command: DockCommand, at time: Double, answered: @escaping @Sendable (DockError?) -> Void) throws {
        try base.perform(command, at: time, answered: answered)
    }
    public var commandLatency: Double { base.commandLatency }
    public mutating func settle(timeout: Double) { base.settle(timeout: timeout) }
    public var zooming: (any ZoomingDock)? { base.zooming }
    public var reportedLimits: DockLimits? { base.reportedLimits }
}
