import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A dock as the client knows it after its hello.
public struct DockAccessory: Sendable, Equatable {
    public var name: String
    public var category: String
    public var identifier: UUID
    public var firmwareVersion: String
    public var hardwareModel: String
    public var capabilities: [String]
}

/// Docked or undocked, as DockKit's accessory state changes.
public enum AccessoryStateChange: Sendable, Equatable {
    case docked(DockAccessory)
    case undocked(DockAccessory)
}

/// Buttons and camera controls on the dock.
public enum AccessoryEvent: Sendable, Equatable {
    case button(id: Int, pressed: Bool)
    case cameraShutter
    case cameraFlip
    case cameraZoom(factor: Double)
}

/// The client side of the dock protocol over a Unix socket, as DockKit's accessory manager:
/// a stream of state changes (docked, undocked) and, for the dock, streams of motion states,
/// accessory events and battery states. After an undocking it says hello again as soon as the
/// dock reports `docked` (re-registration), and the stream reports the dock docked again.
public final class DockAccessoryManager: @unchecked Sendable {
    public let stateChanges: AsyncStream<AccessoryStateChange>
    public let motionStates: AsyncStream<MotionState>
    public let accessoryEvents: AsyncStream<AccessoryEvent>
    public let batteryStates: AsyncStream<BatteryState>
    /// Errors the dock answered with (code and message).
    public let errors: AsyncStream<(code: String, message: String)>

    private let fd: Int32
    private let lock = NSLock()
    private var accessory: DockAccessory?
    private let stateContinuation: AsyncStream<AccessoryStateChange>.Continuation
    private let motionContinuation: AsyncStream<MotionState>.Continuation
    private let eventContinuation: AsyncStream<AccessoryEvent>.Continuation
    private let batteryContinuation: AsyncStream<BatteryState>.Continuation
    private let errorContinuation: AsyncStream<(code: String, message: String)>.Continuation

    /// Connects to the dock serving `socketPath` and says hello.
    public init(socketPath: String) throws(DockError) {
        let fd = try UnixSocket.connect(to: socketPath)
        self.fd = fd
        (stateChanges, stateContinuation) = AsyncStream.makeStream()
        (motionStates, motionContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
        (accessoryEvents, eventContinuation) = AsyncStream.makeStream()
        (batteryStates, batteryContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
        (errors, errorContinuation) = AsyncStream.makeStream()
        Thread.detachNewThread { [self] in readLoop() }
        sayHello()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// The dock, once it has answered the hello.
    public var current: DockAccessory? { lock.withLock { accessory } }

    /// Sends a command (or a query: `getBattery`, `getMotionState`...) to the dock.
    public func send(_ command: DockCommand, at time: Double = 0) {
        write(command.jsonLine(time: time))
    }

    /// Sends a query by name.
    public func query(_ name: String) {
        write(#"{"command":"\#(name)"}"#)
    }

    /// Closes the connection; the streams finish.
    public func disconnect() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func sayHello() {
        write(#"{"type":"hello","protocols":["\#(DockSession.protocolName)"]}"#)
    }

    private func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        // MSG_NOSIGNAL: a dock that went away is an ended stream, not a SIGPIPE.
        lock.withLock { _ = try? Syscall.writeAll(bytes, to: fd, socketFlags: Int32(MSG_NOSIGNAL)) }
    }

    private func readLoop() {
        for item in LineReader(fileDescriptor: fd) {
            guard case .line(let line) = item else { continue }  // a line too long to be the dock's
            if let message = DockMessage(line: line) { handle(message) }
        }
        for finish in [stateContinuation.finish, motionContinuation.finish, eventContinuation.finish, batteryContinuation.finish, errorContinuation.finish] { finish() }
    }

    private func handle(_ message: DockMessage) {
        switch message {
        case .hello(let dock):
            lock.withLock { accessory = dock }
            stateContinuation.yield(.docked(dock))
        case .dockEvent("undocked"):
            if let dock = current { stateContinuation.yield(.undocked(dock)) }
        case .dockEvent("docked"):
            sayHello()  // re-register; the hello answer reports the dock docked again
        case .motionState(let state):
            motionContinuation.yield(state)
        case .battery(let battery):
            batteryContinuation.yield(battery)
        case .accessoryEvent(let event):
            eventContinuation.yield(event)
        case .error(let code, let message):
            errorContinuation.yield((code, message))
        case .dockEvent, .limits:
            break
        }
    }
}
