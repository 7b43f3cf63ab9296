import DockTrackCore
import DockTrackSystem
import CDockCV

/// Frames of a video file, decoded by OpenCV's FFmpeg back end (mp4, avi, mov, mkv, ...).
///
/// Frame times are `index / fps`: the container's frame rate, since FFmpeg's position
/// property is unreliable for some files (0 for every frame of some mp4 and avi files).
package final class VideoFileSource: FrameSource {
    package let info: MediaInfo
    private let capture: OpaquePointer
    private var nextIndex = 0

    /// Opens the video at `path`; throws when it is missing or FFmpeg cannot decode it.
    package init(path: String) throws(FrameSourceError) {
        OutputFile.registerInput(path)
        var status = dcv_status()
        guard let capture = dcv_capture_open(path, &status) else {
            throw .unreadable(path: path, reason: OpenCVError(status).message)
        }
        let raw = dcv_capture_get_info(capture)
        self.capture = capture
        info = MediaInfo(
            name: path, kind: .video,
            size: ImageSize(width: Int(raw.width), height: Int(raw.height)),
            framesPerSecond: raw.fps > 0 ? raw.fps : nil,
            frameCount: raw.frame_count > 0 ? Int(raw.frame_count) : nil)
    }

    deinit { dcv_capture_destroy(capture) }

    package func nextFrame() throws(FrameSourceError) -> Frame? {
        let image = Image()
        var status = dcv_status()
        let result = dcv_capture_read(capture, image.handle, nil, &status)
        guard try handle(result, status) else { return nil }
        defer { nextIndex += 1 }
        return Frame(index: nextIndex, time: time(of: nextIndex), image: image)
    }

    package func skipFrame() throws(FrameSourceError) -> Bool {
        var status = dcv_status()
        let result = dcv_capture_skip(capture, &status)
        guard try handle(result, status) else { return false }
        nextIndex += 1
        return true
    }

    /// Seconds from the start of the video for frame `index`.
    package func time(of index: Int) -> Double {
        guard let fps = info.framesPerSecond else { return 0 }
        return Double(index) / fps
    }

    /// `true` for a frame, `false` at a normal end; throws for a failure or an early end.
    private func handle(_ result: Int32, _ status: dcv_status) throws(FrameSourceError) -> Bool {
        if result > 0 { return true }
        if result < 0 {
            throw .failed(path: info.name, framesRead: nextIndex, reason: OpenCVError(status).message)
        }
        if nextIndex == 0 {
            throw .unreadable(path: info.name, reason: "no frame could be decoded")
        }
        if let expected = info.frameCount, Self.endsEarly(read: nextIndex, expected: expected) {
            throw .truncated(path: info.name, framesRead: nextIndex, expected: expected)
        }
        return false
    }

    /// Containers' frame counts are estimates (motion.mov claims 243 and holds 242), so an end
    /// counts as early only when more than 2 frames and more than 2% are missing.
    package static func endsEarly(read: Int, expected: Int) -> Bool {
        let missing = expected - read
        return missing > 2 && Double(missing) > 0.02 * Double(expected)
    }
}

/// A still image as a source of exactly one frame (index 0, time 0).
package final class ImageFileSource: FrameSource {
    package let info: MediaInfo
    private var image: Image?

    package init(path: String) throws(FrameSourceError) {
        OutputFile.registerInput(path)
        do {
            let image = try Image(contentsOf: path)
            self.image = image
            info = MediaInfo(name: path, kind: .image, size: image.size, frameCount: 1)
        } catch {
            // The shim's reason when it has one of its own (a header claiming too many pixels).
            throw .unreadable(path: path, reason: error.message == "not a readable image" ? "not an image OpenCV can decode" : error.message)
        }
    }

    package func nextFrame() throws(FrameSourceError) -> Frame? {
        guard let image else { return nil }
        self.image = nil
        return Frame(index: 0, time: 0, image: image)
    }
}

/// Frames held in memory: a test double, and a way to repeat a still picture as a sequence.
package struct FrameSequenceSource: FrameSource {
    package let info: MediaInfo
    private var images: [Image]
    private var nextIndex = 0
    private let framesPerSecond: Double

    /// Plays `images` in order at `framesPerSecond`.
    package init(name: String = "memory", images: [Image], framesPerSecond: Double = 30) {
        self.images = images
        self.framesPerSecond = framesPerSecond
        let size = images.first?.size ?? ImageSize(width: 0, height: 0)
        info = MediaInfo(name: name, kind: .synthetic, size: size, framesPerSecond: framesPerSecond, frameCount: images.count)
    }

    package mutating func nextFrame() throws(FrameSourceError) -> Frame? {
        guard nextIndex < images.count else { return nil }
        defer { nextIndex += 1 }
        return Frame(index: nextIndex, time: Double(nextIndex) / framesPerSecond, image: images[nextIndex])
    }
}
