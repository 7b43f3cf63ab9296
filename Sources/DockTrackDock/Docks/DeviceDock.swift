import DockTrackCore
import Foundation

/// A PTZ device (VISCA, UVC) driven directly by the frame loop: commands go to the device, and
/// where it pointed comes from its own position, read back (VISCA's position inquiry, UVC's
/// absolute pan and tilt) at most every ``pollInterval`` seconds and interpolated between
/// reads (``ReportedMotion``; velocities from successive reads). A device that cannot say where
/// it points is followed by a model of its motors.
public final class DeviceDock: Dock {
    public let hardware: any DockHardware
    /// Seconds between position reads.
    public var pollInterval = 0.03
    /// Reads may fail this long (a lost datagram, a busy device) before the dock counts as gone.
    public var tolerance = 2.0
    private let clock: @Sendable () -> Double
    private var reported = ReportedMotion()
    private var model: SimulatedDock
    private var readsPosition = true
    private var lastRead = -Double.infinity
    private var failingSince: Double?

    /// `clock` is the frame clock (seconds); `limits` the device's, for the model.
    public init(hardware: any DockHardware, limits: DockLimits = .standard, clock: @escaping @Sendable () -> Double) {
        self.hardware = hardware
        self.clock = clock
        model = SimulatedDock(limits: limits, time: clock())
        reported.acceleration = DockVector(x: limits.pitch.maximumAcceleration, y: limits.yaw.maximumAcceleration, z: limits.roll.maximumAcceleration)
    }

    public func motion(at time: Double) throws -> MotionState {
        try read()
        guard readsPosition, var state = reported.motion(at: time) else { return model.motion(at: time) }
        state.time = time
        return state
    }

    /// Sends `command` to the device as the model takes it: speeds and targets within the limits
    /// in force (a client's `setLimits` narrows them; devices have no limits of their own to set).
    /// A request the model refuses (out of range numbers, roll without roll) never reaches the
    /// device; the device's own refusal is a ``DockError`` too.
    public func perform(_ command: DockCommand, at time: Double) throws {
        let accepted = try model.apply(command, at: time)
        reported.commanded(accepted, at: clock())
        try hardware.apply(accepted, at: time)
    }

    /// The latency measured from the device's positions (0.05 s until measured).
    public var commandLatency: Double { reported.latency.estimate }
    public var latencySamples: [Double] { reported.latency.samples }

    /// Reads the position when the last read is older than `pollInterval`.
    private func read() throws {
        let now = clock()
        guard readsPosition, now - lastRead >= pollInterval else { return }
        lastRead = now
        let position: DockOrientation?
        do {
            position = try hardware.orientation()
            failingSince = nil
        } catch {
            let since = failingSince ?? now
            failingSince = since
            if now - since > tolerance { throw DockConnectionError("the device stopped answering (\(error))") }
            return
        }
        guard let position else {
            readsPosition = false
            return
        }
        // The velocity over the last 60 ms or more of reads: the position's steps are coarse.
        let base = reported.states.last { now - $0.time >= 0.06 } ?? reported.states.first
        var velocity = AngularVelocity.zero
        if let base, now > base.time { velocity = (position - base.position) * (1 / (now - base.time)) }
        reported.record(MotionState(time: now, position: position, velocity: velocity))
    }
}
