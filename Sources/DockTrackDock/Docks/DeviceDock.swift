import DockTrackCore
import DockTrackSystem
import Foundation
import Synchronization

/// A PTZ device (VISCA, UVC, ONVIF) driven directly by the frame loop: commands go to the
/// device, and where it pointed comes from its own position, read back (VISCA's position
/// inquiry, UVC's absolute pan and tilt, ONVIF's GetStatus) at most every ``pollInterval``
/// seconds and interpolated between reads (``ReportedMotion``; velocities from successive
/// reads). A device that cannot say where it points is followed by a model of its motors.
///
/// Asynchronous (a network camera, whose every request takes tens to hundreds of
/// milliseconds): commands and reads go to the device from a thread of its own
/// (``DeviceWorker``), the newest command wins, and each read is stamped with the middle of its
/// request; the frame loop never waits for the device. A device's refusal then comes with the
/// next command.
package final class DeviceDock: Dock {
    /// Seconds between position reads.
    package var pollInterval = 0.03
    /// Reads may fail this long (a lost datagram, a busy device) before the dock counts as gone.
    package var tolerance = 2.0
    private let clock: @Sendable () -> Double
    private var reported = ReportedMotion()
    private var model: SimulatedDock
    private var readsPosition = true
    private var lastRead = -Double.infinity
    private var failingSince: Double?

    /// The device is the worker's when asynchronous (its thread alone talks to it), else
    /// called one call at a time (the idle stop calls from a thread of its own).
    private let worker: DeviceWorker?
    private let device: LockedDevice?
    private var idleStop: IdleStop?
    /// A zooming device's scale, and the zoom last sent (or read at the start).
    private let zoomScale: ZoomScale?
    private var lastZoom: Double

    /// `clock` is the frame clock (seconds); `limits` the device's, for the model. With
    /// `stopWhenIdle`, a device left turning is sent a stop after that many seconds without a
    /// command or a motion query (``IdleStop``: an outage of the camera, a stalled run).
    package init(hardware: sending any DockHardware, limits: DockLimits = .standard, clock: @escaping @Sendable () -> Double,
                asynchronous: Bool = false, stopWhenIdle: Double? = nil) {
        self.clock = clock
        // An axis the device cannot turn about is one the model keeps still.
        let limits = limits.withAxes(of: hardware.capabilities)
        model = SimulatedDock(limits: limits, time: clock())
        reported.acceleration = DockVector(x: limits.pitch.maximumAcceleration, y: limits.yaw.maximumAcceleration, z: limits.roll.maximumAcceleration)
        let zoomState = hardware.zoomState
        zoomScale = zoomState?.scale
        lastZoom = zoomState?.zoom ?? 0
        let worker: DeviceWorker?, device: LockedDevice?
        if asynchronous {
            worker = DeviceWorker(hardware: hardware, pollInterval: pollInterval, clock: clock)
            device = nil
        } else {
            worker = nil
            device = LockedDevice(hardware)
        }
        self.worker = worker
        self.device = device
        idleStop = stopWhenIdle.map { after in
            IdleStop(after: after, clock: clock) {
                let stop = DockCommand.setAngularVelocity(.zero)
                if let worker { try? worker.send(stop, at: clock()) } else { try? device?.apply(stop, at: clock()) }
            }
        }
    }

    deinit {
        idleStop?.end()
        worker?.stop()
    }

    /// Stops sent because the frame loop fell silent.
    package var idleStopsSent: Int { idleStop?.stopsSent ?? 0 }

    package func motion(at time: Double) throws -> MotionState {
        idleStop?.contact()
        if let worker { try take(worker.takeReadings()) } else { try read() }
        guard readsPosition, var state = reported.motion(at: time) else { return model.motion(at: time) }
        state.time = time
        return state
    }

    /// Sends `command` to the device as the model takes it: speeds and targets within the limits
    /// in force (a client's `setLimits` narrows them; devices have no limits of their own to set).
    /// A request the model refuses (out of range numbers, roll without roll) never reaches the
    /// device; the device's own refusal is a ``DockError`` too.
    package func perform(_ command: DockCommand, at time: Double) throws {
        let accepted = try model.apply(command, at: time)
        reported.commanded(accepted, at: clock())
        idleStop?.contact(moving: IdleStop.keepsMoving(accepted))
        if let worker { try worker.send(accepted, at: time) } else { try device?.apply(accepted, at: time) }
    }

    package func settle(timeout: Double) { worker?.settle(timeout: timeout) }

    /// Zooms a device that zooms (``ZoomingHardware``) to `zoom` (0...1), from the device's
    /// thread when asynchronous (the newest zoom asked wins); a device that does not zoom is
    /// not capable.
    package func zoom(to zoom: Double) throws(DockError) {
        guard zoomScale != nil else { throw .notCapable("zoom") }
        guard zoom.isFinite else { throw .invalidRequest("zoom must be a number") }
        let zoom = max(0, min(1, zoom))
        if let worker {
            try worker.send(zoom: zoom)
        } else {
            try device?.call { hardware throws(DockError) in try (hardware as? any ZoomingHardware)?.zoom(to: zoom) }
        }
        lastZoom = zoom
    }

    /// Itself when its device zooms (``ZoomingHardware``).
    package var zooming: (any ZoomingDock)? { zoomScale != nil ? self : nil }

    /// The latency measured from the device's positions (0.05 s until measured).
    package var commandLatency: Double { reported.latency.estimate }
    package var latencySamples: [Double] { reported.latency.samples }

    /// Reads the position when the last read is older than `pollInterval`.
    private func read() throws {
        let now = clock()
        guard readsPosition, now - lastRead >= pollInterval else { return }
        lastRead = now
        let position: DockOrientation?
        do {
            position = try device?.call { hardware throws(DockError) in try hardware.orientation() } ?? nil
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
        record(position, at: now)
    }

    /// The reads the worker made since the last call: each recorded at its own time; the device
    /// gone when its reads have failed for longer than ``tolerance``.
    private func take(_ readings: DeviceWorker.Readings) throws {
        if readings.cannotSay { readsPosition = false }
        for (position, time) in readings.positions { record(position, at: time) }
        if let since = readings.failingSince, clock() - since > tolerance {
            throw DockConnectionError("the device stopped answering (\(readings.failure.map { "\($0)" } ?? "no answer"))")
        }
    }

    /// A position read at `time`, with the velocity over the last 60 ms or more of reads (the
    /// position's steps are coarse).
    private func record(_ position: DockOrientation, at time: Double) {
        let base = reported.states.last { time - $0.time >= 0.06 } ?? reported.states.first
        var velocity = AngularVelocity.zero
        if let base, time > base.time { velocity = (position - base.position) * (1 / (time - base.time)) }
        reported.record(MotionState(time: time, position: position, velocity: velocity))
    }
}

/// The thread that talks to an asynchronous ``DeviceDock``'s device: sends the newest command
/// taken (one waiting at most: a newer one replaces it), and between commands reads the position
/// every `pollInterval` seconds. The device is used on this thread only.
final class DeviceWorker: Sendable {
    /// What the reads found since they were last taken.
    struct Readings {
        var positions: [(DockOrientation, Double)] = []
        /// The device said it cannot tell where it points.
        var cannotSay = false
        /// Since when reads fail, and the last failure.
        var failingSince: Double?
        var failure: DockError?
    }

    /// What the caller's threads and the device's share.
    private struct Shared {
        var waiting: (command: DockCommand, time: Double)?
        var waitingZoom: Double?
        var inFlight = false
        var readings = Readings()
        var refusal: DockError?
        var stopped = false

        var hasRequest: Bool { waiting != nil || waitingZoom != nil }

        /// Throws the device's refusal of an earlier request, once.
        mutating func takeRefusal() throws(DockError) {
            if let refusal {
                self.refusal = nil
                throw refusal
            }
        }
    }
    private let shared = Monitor(Shared())
    /// Talks to the device until ``stop()``; alone uses it.
    private let working = Mutex<OwnedThread?>(nil)

    init(hardware: sending any DockHardware, pollInterval: Double, clock: @escaping @Sendable () -> Double) {
        // The thread holds the worker until stop().
        let thread = OwnedThread(named: "docktrack device", with: hardware) { [self] hardware in
            work(hardware, pollInterval: pollInterval, clock: clock)
        }
        working.withLock { $0 = thread }
    }

    /// Queues `command` (replacing one not sent yet); throws the device's refusal of an earlier
    /// command, once.
    func send(_ command: DockCommand, at time: Double) throws(DockError) {
        try shared.withLock { (shared) throws(DockError) in
            try shared.takeRefusal()
            shared.waiting = (command, time)
        }
    }

    /// Queues a zoom (replacing one not sent yet); throws the device's refusal of an earlier
    /// request, once.
    func send(zoom: Double) throws(DockError) {
        try shared.withLock { (shared) throws(DockError) in
            try shared.takeRefusal()
            shared.waitingZoom = zoom
        }
    }

    /// The reads made since the last call.
    func takeReadings() -> Readings {
        shared.withLock { shared in
            defer { shared.readings.positions = [] }
            return shared.readings
        }
    }

    /// Waits up to `timeout` seconds for the command waiting (and the one being sent) to go out.
    func settle(timeout: Double) {
        shared.wait(for: { !($0.hasRequest || $0.inFlight) || $0.stopped }, until: Date(timeIntervalSinceNow: max(0, timeout)))
    }

    /// Ends the thread after the request in progress, and waits for it: the device is let go
    /// after its last request.
    func stop() {
        shared.withLock { $0.stopped = true }
        working.withLock { $0 }?.join()
    }

    private func work(_ hardware: any DockHardware, pollInterval: Double, clock: @Sendable () -> Double) {
        var nextRead = clock()
        var readsPosition = true
        while true {
            // A command first, unless a read is overdue by a whole interval (a stream of
            // commands must not starve the closed loop of positions).
            // A zoom before a command: a digital PTZ's pan and tilt turn by how far its window
            // may go at the zoom in force, so a move asked after a zoom goes out at that zoom.
            let deadline = Date(timeIntervalSinceNow: readsPosition ? max(0.001, nextRead - clock()) : 1)
            let taken = shared.withLock(waitingFor: { $0.stopped || $0.hasRequest }, until: deadline) { shared, _ in
                if shared.stopped { return nil as (zoom: Double?, command: (command: DockCommand, time: Double)?)? }
                let overdue = readsPosition && clock() >= nextRead + pollInterval
                let zoom = overdue ? nil : shared.waitingZoom
                if zoom != nil { shared.waitingZoom = nil }
                let command = overdue || zoom != nil ? nil : shared.waiting
                if command != nil { shared.waiting = nil }
                shared.inFlight = command != nil || zoom != nil
                return (zoom, command)
            }
            guard let (zoom, command) = taken else { return }
            if zoom != nil || command != nil {
                var refused: DockError?
                do {
                    if let zoom { try (hardware as? any ZoomingHardware)?.zoom(to: zoom) }
                    if let command { try hardware.apply(command.command, at: command.time) }
                } catch { refused = error }
                shared.withLock {
                    $0.inFlight = false
                    if let refused { $0.refusal = refused }
                }
                continue
            }
            guard readsPosition && clock() >= nextRead else { continue }
            let started = clock()
            nextRead = started + pollInterval
            let result: Result<DockOrientation?, DockError>
            do { result = .success(try hardware.orientation()) } catch { result = .failure(error) }
            let readAt = (started + clock()) / 2
            shared.withLock { shared in
                switch result {
                case .success(let position?):
                    shared.readings.positions.append((position, readAt))
                    shared.readings.failingSince = nil
                    shared.readings.failure = nil
                case .success(nil):
                    shared.readings.cannotSay = true
                case .failure(let error):
                    shared.readings.failingSince = shared.readings.failingSince ?? started
                    shared.readings.failure = error
                }
            }
            if case .success(nil) = result { readsPosition = false }
        }
    }
}

/// A device whose calls are made one at a time, from whichever thread.
private final class LockedDevice: Sendable {
    private let hardware: Mutex<any DockHardware>

    init(_ hardware: sending any DockHardware) { self.hardware = Mutex(hardware) }

    func call<T: Sendable>(_ body: (any DockHardware) throws(DockError) -> T) throws(DockError) -> T {
        try hardware.withLock { (hardware) throws(DockError) -> T in try body(hardware) }
    }

    func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        try call { hardware throws(DockError) in try hardware.apply(command, at: time) }
    }
}

extension DeviceDock: ZoomingDock {
    /// The magnification of the zoom last sent or read (1 for a device that does not zoom).
    package var magnification: Double { zoomScale?.magnification(at: lastZoom) ?? 1 }

    package func zoom(toMagnification magnification: Double) throws(DockError) {
        guard let zoomScale else { throw .notCapable("zoom") }
        try zoom(to: zoomScale.zoom(atMagnification: magnification))
    }
}
