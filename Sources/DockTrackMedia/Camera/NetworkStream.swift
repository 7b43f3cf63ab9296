import DockTrackCore
import DockTrackSystem
import CDockCV
import Foundation

/// A network camera's stream (`rtsp://`, `http://` MJPEG, any URL FFmpeg reads), read live: a
/// thread of its own decodes frames as they arrive and stamps each with its arrival time on the
/// capture clock; ``nextFrame()`` hands out the newest and counts the ones passed over, as a
/// V4L2 camera does. A stream that breaks or goes silent is an error ``ReconnectingCamera``
/// waits out.
package final class NetworkStream {
    /// Whether `text` names a network stream rather than a file: a URL scheme other than `file`.
    package static func isURL(_ text: String) -> Bool {
        guard let range = text.range(of: "://"), range.lowerBound > text.startIndex else { return false }
        let scheme = text[..<range.lowerBound]
        return scheme.lowercased() != "file" && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
    }

    /// The URL as given (credentials included); ``info``'s name and every message carry it
    /// with the password hidden.
    package let url: String
    package let info: MediaInfo
    package let clockOrigin: Double
    /// Seconds ``nextFrame()`` waits for a frame before the stream counts as silent.
    package let frameTimeout: Double
    private let slot = Monitor(Slot())
    private var delivered = 0
    /// Reads and decodes the stream until ``stop()``; alone uses and frees the decoder.
    private let reading: OwnedThread

    /// What the reading thread and the caller share.
    private struct Slot {
        var newest: (image: Image, time: Double)?
        var passedOver = 0
        /// Why the stream ended (read failed, or the server closed it).
        var failure: String?
        var stopping = false
    }

    /// `url` with the password of its user information replaced by `***`.
    package static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].firstIndex(of: "@") else { return url }
        let user = url[scheme.upperBound..<at]
        guard !user.contains("/"), let colon = user.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    /// Connects to `url` and starts reading. Throws ``CameraError/unreachable(url:reason:)`` when
    /// nothing FFmpeg can decode answers within `openTimeout` seconds.
    package init(url: String, openTimeout: Double = 5, frameTimeout: Double = 5,
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
        reading = OwnedThread(named: "docktrack stream", with: handle) { [slot] handle in
            while !slot.withLock({ $0.stopping }) {
                let image = Image()
                var status = dcv_status()
                let result = dcv_capture_read(handle, image.handle, nil, &status)
                let arrived = clock() - origin
                let failure = result > 0 ? nil : result < 0 ? OpenCVError(status).message : "the stream ended"
                slot.withLock { slot in
                    if let failure {
                        slot.failure = failure
                    } else {
                        if slot.newest != nil { slot.passedOver += 1 }
                        slot.newest = (image, arrived)
                    }
                }
                if failure != nil { break }
            }
            dcv_capture_destroy(handle)
        }
    }

    deinit { stop() }

    /// Frames decoded but passed over for newer ones.
    package var droppedFrames: Int { slot.withLock { $0.passedOver } }

    /// The newest frame not handed out yet, waiting up to ``frameTimeout`` for one; `nil` after
    /// ``stop()``. Throws ``CameraError/disconnected(path:framesRead:)`` when the stream broke
    /// or ended (a live stream has no normal end) and ``CameraError/noFrames(path:seconds:framesRead:)``
    /// when it went silent.
    package func nextFrame() throws(FrameSourceError) -> Frame? {
        enum Taken { case frame(Image, Double), stopped, failed, silent }
        let taken = slot.withLock(waitingFor: { $0.newest != nil || $0.failure != nil || $0.stopping },
                                  until: Date(timeIntervalSinceNow: frameTimeout)) { slot, ready -> Taken in
            if slot.stopping { return .stopped }
            guard let (image, time) = slot.newest else { return ready ? .failed : .silent }
            slot.newest = nil
            return .frame(image, time)
        }
        switch taken {
        case .stopped: return nil
        case .silent: throw .camera(.noFrames(path: info.name, seconds: frameTimeout, framesRead: delivered))
        case .failed: throw .camera(.disconnected(path: info.name, framesRead: delivered))
        case .frame(let image, let time):
            delivered += 1
            return Frame(index: delivered - 1, time: time, image: image)
        }
    }

    /// Stops reading and waits until the reading thread has ended (its current read returns with
    /// the next frame, or fails within the frame timeout): a process that exits while the thread
    /// is inside FFmpeg crashes in its static destructors.
    package func stop() {
        slot.withLock { $0.stopping = true }
        reading.join()
    }
}
