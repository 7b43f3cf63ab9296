import DockTrackCore
import CDockCV
import Foundation

/// A network camera's stream (`rtsp://`, `http://` MJPEG, any URL FFmpeg reads), read live: a
/// thread of its own decodes frames as they arrive and stamps each with its arrival time on the
/// capture clock; ``nextFrame()`` hands out the newest and counts the ones passed over, as a
/// V4L2 camera does. A stream that breaks or goes silent is an error ``ReconnectingCamera``
/// waits out.
public final class NetworkStream {
    /// Whether `text` names a network stream rather than a file: a URL scheme other than `file`.
    public static func isURL(_ text: String) -> Bool {
        guard let range = text.range(of: "://"), range.lowerBound > text.startIndex else { return false }
        let scheme = text[..<range.lowerBound]
        return scheme.lowercased() != "file" && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
    }

    /// The URL as given (credentials included); ``info``'s name and every message carry it
    /// with the password hidden.
    public let url: String
    public let info: MediaInfo
    public let clockOrigin: Double
    /// Seconds ``nextFrame()`` waits for a frame before the stream counts as silent.
    public let frameTimeout: Double
    private let slot: Slot
    private var delivered = 0

    /// What the reading thread and the caller share, under `condition`.
    private final class Slot: @unchecked Sendable {
        let condition = NSCondition()
        var newest: (image: Image, time: Double)?
        var passedOver = 0
        /// Why the stream ended (read failed, or the server closed it).
        var failure: String?
        var stopping = false
        /// Set by the reading thread as it ends (its decoder freed).
        var ended = false
    }

    /// The decoder, handed to the reading thread, which alone uses and frees it.
    private struct Capture: @unchecked Sendable { let handle: OpaquePointer }

    /// `url` with the password of its user information replaced by `***`.
    public static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let user = url[scheme.upperBound..<at]
        guard !user.contains("/"), let colon = user.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// Connects to `url` and starts reading. Throws ``CameraError/unreachable(url:reason:)`` when
    /// nothing FFmpeg can decode answers within `openTimeout` seconds.
    public init(url: String, openTimeout: Double = 5, frameTimeout: Double = 5,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now, clockOrigin: Double? = nil) throws(CameraError) {
        self.url = url
        let name = Self.redacted(url)
        self.frameTimeout = frameTimeout
        let origin = clockOrigin ?? clock()
        self.clockOrigin = origin
        var status = dcv_status()
        let milliseconds = { (seconds: Double) in Int32(max(1, min(3_600_000, (seconds.isFinite ? seconds : 5) * 1000))) }
        guard let handle = dcv_capture_open_stream(url, milliseconds(openTimeout), milliseconds(frameTimeout), &status) else {
            throw .unreachable(url: name, reason: OpenCVError(status).message)
        }
        let raw = dcv_capture_get_info(handle)
        info = MediaInfo(name: name, kind: .camera, size: ImageSize(width: Int(raw.width), height: Int(raw.height)),
                         framesPerSecond: raw.fps > 0 && raw.fps < 1000 ? raw.fps : nil)
        let slot = Slot()
        self.slot = slot
        let capture = Capture(handle: handle)
        let thread = Thread {
            while true {
                slot.condition.lock()
                let stopping = slot.stopping
                slot.condition.unlock()
                if stopping { break }
                let image = Image()
                var status = dcv_status()
                let result = dcv_capture_read(capture.handle, image.handle, nil, &status)
                let arrived = clock() - origin
                slot.condition.lock()
                if result > 0 {
                    if slot.newest != nil { slot.passedOver += 1 }
                    slot.newest = (image, arrived)
                } else {
                    slot.failure = result < 0 ? OpenCVError(status).message : "the stream ended"
                }
                slot.condition.broadcast()
                slot.condition.unlock()
                if result <= 0 { break }
            }
            dcv_capture_destroy(capture.handle)
            slot.condition.lock()
            slot.ended = true
            slot.condition.broadcast()
            slot.condition.unlock()
        }
        thread.name = "docktrack stream"
        thread.start()
    }

    deinit { stop() }

    /// Frames decoded but passed over for newer ones.
    public var droppedFrames: Int {
        slot.condition.lock()
        defer { slot.condition.unlock() }
        return slot.passedOver
    }

    /// The newest frame not handed out yet, waiting up to ``frameTimeout`` for one; `nil` after
    /// ``stop()``. Throws ``CameraError/disconnected(path:framesRead:)`` when the stream broke
    /// or ended (a live stream has no normal end) and ``CameraError/noFrames(path:seconds:framesRead:)``
    /// when it went silent.
    public func nextFrame() throws(FrameSourceError) -> Frame? {
        slot.condition.lock()
        defer { slot.condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: frameTimeout)
        while slot.newest == nil && slot.failure == nil && !slot.stopping {
            if !slot.condition.wait(until: deadline) {
                throw .camera(.noFrames(path: info.name, seconds: frameTimeout, framesRead: delivered))
            }
        }
        if slot.stopping { return nil }
        if let (image, time) = slot.newest {
            slot.newest = nil
            delivered += 1
            return Frame(index: delivered - 1, time: time, image: image)
        }
        throw .camera(.disconnected(path: info.name, framesRead: delivered))
    }

    /// Stops reading and waits until the reading thread has ended (its current read returns with
    /// the next frame, or fails within the frame timeout): a process that exits while the thread
    /// is inside FFmpeg crashes in its static destructors.
    public func stop() {
        slot.condition.lock()
        defer { slot.condition.unlock() }
        slot.stopping = true
        slot.condition.broadcast()
        let deadline = Date(timeIntervalSinceNow: frameTimeout + 1)
        while !slot.ended && slot.condition.wait(until: deadline) {}
    }
}
