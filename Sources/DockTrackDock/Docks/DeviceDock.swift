import DockTrackCore
import Foundation

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

    /// The thread that talks to the device when asynchronous.
    private let worker: DeviceWorker?
    /// The device's calls, one at a time (the idle stop calls from a thread of its own).
    private let device: LockedDevice
    private var idleStop: IdleStop?

    /// `clock` is the frame clock (seconds); `limits` the device's, for the model. With
    /// `stopWhenIdle`, a device left turning is sent a stop after that many seconds without a
    /// command or a motion query (``IdleStop``: an outage of the camera, a stalled run).
    public init(hardware: any DockHardware, limits: DockLimits = .standard, clock: @escaping @Sendable () -> Double,
                asynchronous: Bool = false, stopWhenIdle: Double? = nil) {
        self.hardware = hardware
        self.clock = clock
        model = SimulatedDock(limits: limits, time: clock())
        reported.acceleration = DockVector(x: limits.pitch.maximumAcceleration, y: limits.yaw.maximumAcceleration, z: limits.roll.maximumAcceleration)
        let worker = asynchronous ? DeviceWorker(hardware: hardware, pollInterval: pollInterval, clock: clock) : nil
        let device = LockedDevice(hardware)
        self.worker = worker
        self.device = device
        idleStop = stopWhenIdle.map { after in
            IdleStop(after: after, clock: clock) {
                let stop = DockCommand.setAngularVelocity(.zero)
                if let worker { try? worker.send(stop, at: clock()) } else { try? device.apply(stop, at: clock()) }
            }
        }
    }

    deinit {
        idleStop?.end()
        worker?.stop()
    }

    /// Stops sent because the frame loop fell silent.
    public var idleStopsSent: Int { idleStop?.stopsSent ?? 0 }

    public func motion(at time: Double) throws -> MotionState {
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
    public func perform(_ command: DockCommand, at time: Double) throws {
        let accepted = try model.apply(command, at: time)
        reported.commanded(accepted, at: clock())
        idleStop?.contact(moving: IdleStop.keepsMoving(accepted))
        if let worker { try worker.send(accepted, at: time) } else { try device.apply(accepted, at: time) }
    }

    public func settle(timeout: Double) { worker?.settle(timeout: timeout) }

    /// Zooms a device that zooms (``ZoomingHardware``) to `zoom` (0...1), from the device's
    /// thread when asynchronous (the newest zoom asked wins); a device that does not zoom is
    /// not capable.
    public func zoom(to zoom: Double) throws(DockError) {
        guard let zooming = hardware as? any ZoomingHardware else { throw .notCapable("zoom") }
        guard zoom.isFinite else { throw .invalidRequest("zoom must be a number") }
        if let worker { try worker.send(zoom: zoom) } else { try device.call { _ throws(DockError) in try zooming.zoom(to: zoom) } }
    }

    /// Itself when its device zooms (``ZoomingHardware``).
    public var zooming: (any ZoomingDock)? { hardware is any ZoomingHardware ? self : nil }

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
            position = try device.call { hardware throws(DockError) in try hardware.orientation() }
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
final class DeviceWorker: @unchecked Sendable {
    /// What the reads found since they were last taken.
    struct Readings {
        var positions: [(DockOrientation, Double)] = []
        /// The device said it cannot tell where it points.
        var cannotSay = false
        /// Since when reads fail, and the last failure.
        var failingSince: Double?
        var failure: DockError?
    }

    // Guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: (command: DockCommand, time: Double)?
    private var waitingZoom: Double?
    private var inFlight = false
    private var readings = Readings()
    private var refusal: DockError?
    private var stopped = false
    private let running = DispatchGroup()

    init(hardware: any DockHardware, pollInterval: Double, clock: @escaping @Sendable () -> Double) {
        let device = Device(hardware)
        running.enter()
        let thread = Thread { [self] in
            work(device, pollInterval: pollInterval, clock: clock)
            running.leave()
        }
        thread.name = "docktrack-device"
        thread.start()
    }

    /// Queues `command` (replacing one not sent yet); throws the device's refusal of an earlier
    /// command, once.
    func send(_ command: DockCommand, at time: Double) throws(DockError) {
        condition.lock()
        defer { condition.unlock() }
        if let refusal {
            self.refusal = nil
            throw refusal
        }
        waiting = (command, time)
        condition.broadcast()
    }

    /// Queues a zoom (replacing one not sent yet); throws the device's refusal of an earlier
    /// request, once.
    func send(zoom: Double) throws(DockError) {
        condition.lock()
        defer { condition.unlock() }
        if let refusal {
            self.refusal = nil
            throw refusal
        }
        waitingZoom = zoom
        condition.broadcast()
    }

    /// The reads made since the last call.
    func takeReadings() -> Readings {
        condition.lock()
        defer { condition.unlock() }
        let taken = readings
        readings.positions = []
        return taken
    }

    /// Waits up to `timeout` seconds for the command waiting (and the one being sent) to go out.
    func settle(timeout: Double) {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        condition.lock()
        while (waiting != nil || waitingZoom != nil || inFlight) && !stopped && condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// Ends the thread after the request in progress, without waiting for it.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work(_ device: Device, pollInterval: Double, clock: @Sendable () -> Double) {
        var nextRead = clock()
        var readsPosition = true
        while true {
            condition.lock()
            while !stopped && waiting == nil && waitingZoom == nil && !(readsPosition && clock() >= nextRead) {
                _ = condition.wait(until: Date(timeIntervalSinceNow: readsPosition ? max(0.001, nextRead - clock()) : 1))
            }
            if stopped {
                condition.unlock()
                return
            }
            // A command first, unless a read is overdue by a whole interval (a stream of
            // commands must not starve the closed loop of positions).
            // A zoom before a command: a digital PTZ's pan and tilt turn by how far its window
            // may go at the zoom in force, so a move asked after a zoom goes out at that zoom.
            let overdue = readsPosition && clock() >= nextRead + pollInterval
            let zoom = overdue ? nil : waitingZoom
            if zoom != nil { waitingZoom = nil }
            let command = overdue || zoom != nil ? nil : waiting
            if command != nil { waiting = nil }
            inFlight = command != nil || zoom != nil
            condition.unlock()
            if zoom != nil || command != nil {
                var refused: DockError?
                do {
                    if let zoom { try (device.hardware as? any ZoomingHardware)?.zoom(to: zoom) }
                    if let command { try device.hardware.apply(command.command, at: command.time) }
                } catch { refused = error }
                condition.lock()
                inFlight = false
                if let refused { refusal = refused }
                condition.broadcast()
                condition.unlock()
                continue
            }
            let started = clock()
            nextRead = started + pollInterval
            let result: Result<DockOrientation?, DockError>
            do { result = .success(try device.hardware.orientation()) } catch { result = .failure(error) }
            let readAt = (started + clock()) / 2
            condition.lock()
            switch result {
            case .success(let position?):
                readings.positions.append((position, readAt))
                readings.failingSince = nil
                readings.failure = nil
            case .success(nil):
                readings.cannotSay = true
                readsPosition = false
            case .failure(let error):
                readings.failingSince = readings.failingSince ?? started
                readings.failure = error
            }
            condition.unlock()
        }
    }

    /// The device, handed to the worker's thread.
    private final class Device: @unchecked Sendable {
        let hardware: any DockHardware
        init(_ hardware: any DockHardware) { self.hardware = hardware }
    }
}

/// A device whose calls are made one at a time, from whichever thread.
private final class LockedDevice: @unchecked Sendable {
    private let hardware: any DockHardware
    private let lock = NSLock()

    init(_ hardware: any DockHardware) { self.hardware = hardware }

    func call<T>(_ body: (any DockHardware) throws(DockError) -> T) throws(DockError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(hardware)
    }

    func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        try call { hardware throws(DockError) in try hardware.apply(command, at: time) }
    }
}

extension DeviceDock: ZoomingDock {
    /// The magnification of the zoom last sent or read (1 for a device that does not zoom).
    public var magnification: Double {
        guard let zooming = hardware as? any ZoomingHardware else { return 1 }
        return zooming.magnification(at: zooming.zoom)
    }

    public func zoom(toMagnification magnification: Double) throws(DockError) {
        guard let zooming = hardware as? any ZoomingHardware else { throw .notCapable("zoom") }
        try zoom(to: zooming.zoom(atMagnification: magnification))
    }
}
