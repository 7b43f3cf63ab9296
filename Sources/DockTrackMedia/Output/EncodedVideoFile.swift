import CDockCV
import DockTrackCore
import CDockVideo

/// A video file written through FFmpeg's encoder API (the `CDockVideo` shim): H.264 by x264 at
/// a preset of the caller's choice, MPEG-4 part 2 where there is no H.264 encoder. OpenCV's own
/// writer encodes at x264's slower default preset with no way to ask for another.
package final class EncodedVideoFile {
    /// x264's preset for files DockTrack writes. `docktrack reframe` of Megamind at 1280x720 to
    /// 404x720 (frames per second of the whole run, file size): medium 30.8 fps, 1.06 MB;
    /// veryfast 39.5 fps, 0.96 MB; superfast 41.1, 1.30 MB; ultrafast 44.9, 1.84 MB.
    package static let defaultPreset = "veryfast"

    package let path: String
    package let size: ImageSize
    private var writer: OpaquePointer?

    /// A file at `path` (the container follows its name) for frames of `size` (even width and
    /// height) at `framesPerSecond`.
    package init(path: String, size: ImageSize, framesPerSecond: Double, preset: String = EncodedVideoFile.defaultPreset,
                quality crf: Int = 23) throws(OpenCVError) {
        self.path = path
        self.size = size
        var status = dvideo_status()
        guard let writer = dvideo_writer_open(path, Int32(clamping: size.width), Int32(clamping: size.height), framesPerSecond,
                                              preset, Int32(crf), &status) else { throw Self.error(status) }
        self.writer = writer
    }

    deinit { try? close() }

    /// The encoder in use ("libx264", "mpeg4").
    package var codec: String { writer.map { String(cString: dvideo_writer_codec($0)) } ?? "" }

    /// Encodes `image` (BGR, of the file's size; another size is resized to it first).
    package func write(_ image: Image) throws(OpenCVError) {
        guard let writer else { throw OpenCVError(code: Int32(DCV_ERR_WRITE.rawValue), message: "\(path): already closed") }
        let frame = image.size == size && image.channels == 3 ? image : try image.resized(to: size)
        guard frame.channels == 3, let pixels = dcv_image_pixels(frame.handle) else {
            throw OpenCVError(code: Int32(DCV_ERR_WRITE.rawValue), message: "\(path): a video frame must be a colour image")
        }
        var status = dvideo_status()
        let result = withExtendedLifetime(frame) { dvideo_writer_write_bgr(writer, pixels, Int32(dcv_image_stride(frame.handle)), &status) }
        if result < 0 { throw Self.error(status, path: path) }
    }

    /// Writes what the encoder holds back and the end of the file; later writes fail.
    package func close() throws(OpenCVError) {
        guard let writer else { return }
        self.writer = nil
        var status = dvideo_status()
        if dvideo_writer_close(writer, &status) < 0 { throw Self.error(status, path: path) }
    }

    private static func error(_ status: dvideo_status, path: String? = nil) -> OpenCVError {
        let message = withUnsafeBytes(of: status.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        return OpenCVError(code: Int32(DCV_ERR_WRITE.rawValue), message: path.map { "\($0): \(message)" } ?? message)
    }
}
