import DockTrackCore
import DockTrackSystem
import CDockCV
import Foundation

/// Why a virtual camera could not be published.
package struct VirtualCameraError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
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
package final class VirtualCameraOutput: Sendable {
    package let name: String
    package let size: ImageSize
    package let framesPerSecond: Int
    private let process: Process
    private let input: FileHandle
    /// Writes the newest frame to the pipeline until ``close()``.
    private let writer: OwnedThread
    /// What the caller and the writing thread share.
    private struct Shared {
        var waiting: (image: Image, capture: Double)?
        var closed = false
        var failure: String?
        var latencies: [Double] = []
        var written = 0, replaced = 0
    }
    private let shared = Monitor(Shared())

    /// Seconds from each frame's capture (the monotonic clock) to its last byte entering the pipeline.
    package var latencies: [Double] { shared.withLock { $0.latencies } }
    /// Frames written, and frames replaced by a newer one before they could be.
    package var written: Int { shared.withLock { $0.written } }
    package var replaced: Int { shared.withLock { $0.replaced } }

    /// Starts the pipeline (`gst-launch-1.0`, from gstreamer1.0-tools, with gstreamer1.0-pipewire)
    /// for frames of `size` at `framesPerSecond`.
    package init(name: String, size: ImageSize, framesPerSecond: Int = 30, launcher: String = "gst-launch-1.0") throws(VirtualCameraError) {
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
        let (shared, input, size, name) = (shared, input, size, name)
        writer = OwnedThread(named: "docktrack vcam") { Self.writeFrames(shared: shared, to: input, size: size, name: name) }
    }

    deinit { close() }

    /// Hands over a frame (resized to ``size`` when it is not) captured at `capture` seconds of
    /// the monotonic clock; throws when the pipeline has ended.
    package func publish(_ image: Image, capturedAt capture: Double) throws(VirtualCameraError) {
        try shared.withLock { (shared) throws(VirtualCameraError) in
            if let failure = shared.failure { throw VirtualCameraError(message: failure) }
            if shared.closed { throw VirtualCameraError(message: "virtual camera \(name): closed") }
            if shared.waiting != nil { shared.replaced += 1 }
            shared.waiting = (image, capture)
        }
    }

    /// Stops the pipeline (the virtual camera goes away).
    package func close() {
        let wasClosed = shared.withLock { shared in
            defer { shared.closed = true }
            return shared.closed
        }
        guard !wasClosed else { return }
        // The writer ends after the frame it is writing; then the pipe is closed (never under a
        // write, whose descriptor number the next file opened could take).
        writer.join()
        try? input.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// The writing thread: the newest frame waiting, until closed or the pipeline ends.
    private static func writeFrames(shared: Monitor<Shared>, to input: FileHandle, size: ImageSize, name: String) {
        while true {
            let taken = shared.withLock(waitingFor: { $0.waiting != nil || $0.closed }) { shared, _ -> (image: Image, capture: Double)? in
                guard !shared.closed else { return nil }
                defer { shared.waiting = nil }
                return shared.waiting
            }
            guard let (image, capture) = taken else { return }
            let ok = write(image, to: input, size: size)
            let done = MonotonicClock.now()
            shared.withLock { shared in
                if ok {
                    shared.written += 1
                    shared.latencies.append(done - capture)
                } else if shared.failure == nil {
                    shared.failure = "virtual camera \(name): the GStreamer pipeline ended (is PipeWire running?)"
                }
            }
            if !ok { return }
        }
    }

    /// Writes the frame's rows (BGR, no padding) to the pipeline; `false` when it is gone.
    private static func write(_ image: Image, to input: FileHandle, size: ImageSize) -> Bool {
        guard let frame = try? (image.size == size && image.channels == 3 ? image : image.resized(to: size)),
              frame.channels == 3, let base = dcv_image_pixels(frame.handle) else { return true }
        let stride = dcv_image_stride(frame.handle), rowBytes = size.width * 3
        var rows = [UInt8]()
        rows.reserveCapacity(rowBytes * size.height)
        withExtendedLifetime(frame) {
            for y in 0..<size.height { rows.append(contentsOf: UnsafeRawBufferPointer(start: base + y * stride, count: rowBytes)) }
        }
        // A pipeline that ended is a failed write (EPIPE), never a SIGPIPE to this process.
        return (try? Syscall.writeAll(rows, to: input.fileDescriptor)) != nil
    }
}
