import DockTrackCore
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A frame source fed live by a capture clock: frame times count from ``clockOrigin`` on the
/// monotonic clock, so `MonotonicClock.now() - clockOrigin - frame.time` is how old a frame is.
public protocol LiveFrameSource: FrameSource, AnyObject {
    var clockOrigin: Double { get }
    /// Frames captured but never delivered (a newer one was, or the driver lost them).
    var droppedFrames: Int { get }
    /// Stops capturing and lets the device or stream go; later frames are `nil`.
    func stop()
}

extension V4L2Camera: LiveFrameSource {}
extension NetworkStream: LiveFrameSource {}

/// What happened to a camera while ``ReconnectingCamera`` was reading it.
public enum CameraEvent: Sendable, Equatable {
    /// The camera stopped delivering (unplugged, or no frame within the timeout).
    case lost(CameraError)
    /// It is back and streaming again, after `seconds` away.
    case reconnected(path: String, seconds: Double)
}

/// A camera that, when it disappears, waits for it to come back and resumes: frame indices go
/// on counting and frame times stay on the same clock. Errors that waiting cannot fix (no
/// permission, not a capture device, no usable format) still end the stream.
public final class ReconnectingCamera: LiveFrameSource {
    public typealias Opener = (_ clockOrigin: Double) throws(CameraError) -> any LiveFrameSource

    private let open: Opener
    private var camera: (any LiveFrameSource)?
    private let retryInterval: Double
    private let giveUpAfter: Double?
    private let clock: @Sendable () -> Double
    private let sleep: (Double) -> Void
    private let onEvent: (CameraEvent) -> Void
    private var delivered = 0
    private var droppedBefore = 0
    public let clockOrigin: Double
    public let info: MediaInfo

    /// Opens the first camera at once (its errors throw). `giveUpAfter` seconds of waiting for
    /// a lost camera end the stream (`nil`: wait for ever).
    public init(clock: @escaping @Sendable () -> Double = MonotonicClock.now, retryInterval: Double = 0.5,
                giveUpAfter: Double? = nil, sleep: @escaping (Double) -> Void = { Thread.sleep(forTimeInterval: $0) },
                onEvent: @escaping (CameraEvent) -> Void, open: @escaping Opener) throws(CameraError) {
        self.clock = clock
        self.retryInterval = retryInterval
        self.giveUpAfter = giveUpAfter
        self.sleep = sleep
        self.onEvent = onEvent
        self.open = open
        let origin = clock()
        clockOrigin = origin
        let first = try open(origin)
        camera = first
        info = first.info
    }

    public var droppedFrames: Int { droppedBefore + (camera?.droppedFrames ?? 0) }

    /// The camera being read; `nil` while waiting for it to come back.
    public var current: (any LiveFrameSource)? { camera }

    public func nextFrame() throws(FrameSourceError) -> Frame? {
        while true {
            if camera == nil { try reconnect() }
            guard var current = camera else { return nil }
            do {
                guard var frame = try current.nextFrame() else { return nil }
                frame.index = delivered
                delivered += 1
                return frame
            } catch {
                guard case .camera(let problem) = error, Self.isTransient(problem) else { throw error }
                onEvent(.lost(problem))
                droppedBefore += current.droppedFrames
                current.stop()
                camera = nil
            }
        }
    }

    private func reconnect() throws(FrameSourceError) {
        let lostAt = clock()
        var lastProblem = CameraError.disconnected(path: info.name, framesRead: delivered)
        while giveUpAfter.map({ clock() - lostAt < $0 }) ?? true {
            do {
                camera = try open(clockOrigin)
                onEvent(.reconnected(path: info.name, seconds: clock() - lostAt))
                return
            } catch {
                guard Self.isTransient(error) else { throw .camera(error) }
                lastProblem = error
            }
            sleep(retryInterval)
        }
        throw .camera(lastProblem)
    }

    /// Whether waiting can fix it: the camera is away, busy, or silent.
    public static func isTransient(_ problem: CameraError) -> Bool {
        switch problem {
        case .notFound, .disconnected, .noFrames, .busy, .unreachable: true
        case .failed(_, let error): error.kind == .disconnected || error.kind == .other
        case .permissionDenied, .notACaptureDevice, .noUsableFormat, .conversion: false
        }
    }

    public func stop() { camera?.stop() }
}
