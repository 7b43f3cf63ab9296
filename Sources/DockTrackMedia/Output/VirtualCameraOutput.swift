import DockTrackCore
import CDockCV
import Foundation

/// Why a virtual camera could not be published.
public struct VirtualCameraError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// A video source other programs open like a webcam: frames handed to ``publish(_:)`` go, as raw
/// BGR, into a GStreamer pipeline ending in `pipewiresink` (a PipeWire `Video/Source` node named
/// `name`), which browsers, OBS and video-call programs on a PipeWire desktop list as a camera,
/// and programs that only open /dev/video* see through PipeWire's V4L2 emulation (`pw-v4l2`).
///
/// The newest frame wins: frames are written on a thread of their own, and one that arrives while
/// the pipeline is still taking the previous one replaces the one waiting, so a slow consumer
/// never holds up tracking. A pipeline that ends (PipeWire went away) is reported by
/// ``publish(_:)``.
public final class VirtualCameraOutput: @unchecked Sendable {
    public let name: String
    public let size: ImageSize
    public let framesPerSecond: Int
    private let process: Process
    private let input: FileHandle
    private let lock = NSCondition()
    private var waiting: (image: Image, capture: Double)?
    private var closed = false
    private var failure: String?
    private var writer: Thread?
    /// Seconds from each frame's capture (the monotonic clock) to its last byte entering the pipeline.
    public private(set) var latencies: [Double] = []
    /// Frames written, and frames replaced by a newer one before they could be.
    public private(set) var written = 0, replaced = 0

    /// Starts the pipeline (`gst-launch-1.0`, from gstreamer1.0-tools, with gstreamer1.0-pipewire)
    /// for frames of `size` at `framesPerSecond`.
    public init(name: String, size: ImageSize, framesPerSecond: Int = 30, launcher: String = "gst-launch-1.0") throws(VirtualCameraError) {
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw VirtualCameraError(message: "virtual camera name '\(name)': use letters, digits, '-', '_' and '.'")
        }
        guard size.width >= 2, size.height >= 2, size.width <= 8192, size.height <= 8192, size.width % 2 == 0, size.height % 2 == 0 else {
            throw VirtualCameraError(message: "virtual camera size \(size): even numbers from 2 to 8192")
        }
        self.name = name
        self.size = size
        self.framesPerSecond = max(1, min(framesPerSecond, 240))
        let arguments = ["-q", "fdsrc", "fd=0", "!",
                         "rawvideoparse", "use-sink-caps=false", "width=\(size.width)", "height=\(size.height)", "format=bgr",
                         "framerate=\(self.framesPerSecond)/1", "!", "queue", "max-size-buffers=2", "leaky=downstream", "!",
                         "videoconvert", "!", "video/x-raw,format=YUY2", "!",
                         "pipewiresink", "mode=provide", "sync=false",
                         "stream-properties=p,media.class=Video/Source,node.name=\(name),node.description=\(name)"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [launcher] + arguments
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw VirtualCameraError(message: "virtual camera: cannot start \(launcher) (install gstreamer1.0-tools and gstreamer1.0-pipewire): \(error.localizedDescription)")
        }
        self.process = process
        input = pipe.fileHandleForWriting
        // A pipeline that ends must not kill this process with SIGPIPE on the next write.
        signal(SIGPIPE, SIG_IGN)
        let thread = Thread { [unowned self] in self.writeFrames() }
        thread.name = "virtual camera"
        writer = thread
        thread.start()
    }

    deinit { close() }

    /// Hands over a frame (resized to ``size`` when it is not) captured at `capture` seconds of
    /// the monotonic clock; throws when the pipeline has ended.
    public func publish(_ image: Image, capturedAt capture: Double) throws(VirtualCameraError) {
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw VirtualCameraError(message: failure) }
        if closed { throw VirtualCameraError(message: "virtual camera \(name): closed") }
        if waiting != nil { replaced += 1 }
        waiting = (image, capture)
        lock.signal()
    }

    /// Stops the pipeline (the virtual camera goes away).
    public func close() {
        lock.lock()
        let wasClosed = closed
        closed = true
        lock.signal()
        lock.unlock()
        guard !wasClosed else { return }
        try? input.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    private func writeFrames() {
        while true {
            lock.lock()
            while waiting == nil && !closed { lock.wait() }
            guard !closed, let (image, capture) = waiting else { lock.unlock(); return }
            waiting = nil
            lock.unlock()
            let ok = write(image)
            let done = MonotonicClock.now()
            lock.lock()
            if ok {
                written += 1
                latencies.append(done - capture)
            } else if failure == nil {
                failure = "virtual camera \(name): the GStreamer pipeline ended (is PipeWire running?)"
            }
            lock.unlock()
            if !ok { return }
        }
    }

    /// Writes the frame's rows (BGR, no padding) to the pipeline; `false` when it is gone.
    private func write(_ image: Image) -> Bool {
        guard let frame = try? (image.size == size && image.channels == 3 ? image : image.resized(to: size)),
              frame.channels == 3, let base = dcv_image_pixels(frame.handle) else { return true }
        let stride = dcv_image_stride(frame.handle), rowBytes = size.width * 3
        var rows = Data(capacity: rowBytes * size.height)
        for y in 0..<size.height { rows.append(base + y * stride, count: rowBytes) }
        return withExtendedLifetime(frame) {
            rows.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let n = Foundation.write(input.fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return false }
                    offset += n
                }
                return true
            }
        }
    }
}
