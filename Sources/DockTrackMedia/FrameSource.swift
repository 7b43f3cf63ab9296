import DockTrackCore
import DockTrackSystem
import Foundation

/// Where frames come from: a video file, an image, a camera, a simulator's virtual view.
///
/// A source hands out frames in order until it returns `nil` at the end of its input; a
/// failure midway throws, and frames handed out before it stay valid.
public protocol FrameSource {
    /// What the source knows about its input before reading it.
    var info: MediaInfo { get }
    /// The next frame, or `nil` when the input has ended normally.
    mutating func nextFrame() throws(FrameSourceError) -> Frame?
    /// Advances past the next frame without converting its pixels; `false` at the end.
    mutating func skipFrame() throws(FrameSourceError) -> Bool
}

extension FrameSource {
    public mutating func skipFrame() throws(FrameSourceError) -> Bool {
        try nextFrame() != nil
    }
}

/// What a source says about its input.
public struct MediaInfo: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case video, image, camera, synthetic
    }

    /// The path or device name, as given.
    public var name: String
    public var kind: Kind
    public var size: ImageSize
    /// Frames per second, when the input says.
    public var framesPerSecond: Double?
    /// How many frames the input claims to hold, when it says (containers can be wrong).
    public var frameCount: Int?

    public init(name: String, kind: Kind, size: ImageSize, framesPerSecond: Double? = nil, frameCount: Int? = nil) {
        self.name = name
        self.kind = kind
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.frameCount = frameCount
    }
}

/// Why a source could not deliver frames. Each case's description is one line naming the
/// input and the problem.
public enum FrameSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// There is no file at the path.
    case fileNotFound(path: String)
    /// The file exists but is not a video or image this build can decode.
    case unreadable(path: String, reason: String)
    /// Decoding failed after `framesRead` frames.
    case failed(path: String, framesRead: Int, reason: String)
    /// The stream ended after `framesRead` frames although the file claims `expected`.
    case truncated(path: String, framesRead: Int, expected: Int)
    /// A camera could not be opened, or stopped delivering.
    case camera(CameraError)
    /// The first frame asked for lies past the end of the input.
    case startPastEnd(start: Int, frames: Int)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "\(path): no such file"
        case .unreadable(let path, let reason):
            return "\(path): cannot be read (\(reason))"
        case .failed(let path, let framesRead, let reason):
            return "\(path): decoding failed after frame \(framesRead - 1) (\(framesRead) frames read): \(reason)"
        case .truncated(let path, let framesRead, let expected):
            return "\(path): video ends early, after \(framesRead) of the \(expected) frames it claims (truncated or corrupt file)"
        case .camera(let error):
            return error.description
        case .startPastEnd(let start, let frames):
            return "the first frame asked for (\(start)) is past the end of the input (\(frames) frames)"
        }
    }
}

/// Opens media files by path: still images by their extension, everything else as video.
public enum MediaFile {
    /// File extensions read as a single still frame.
    public static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp", "pgm", "ppm", "pbm", "pnm"]

    /// Whether `path` names a still image (by its extension).
    public static func isImage(_ path: String) -> Bool {
        imageExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// A frame source for the file at `path`; for a URL (`rtsp://`, `http://` MJPEG, ...) the
    /// network stream it names, read live (``NetworkStream``: newest frame wins, no end of its own).
    ///
    /// A named pipe (FIFO) is read as a stream once a writer has sent something into it; until
    /// then `waiting` is told once (`nil`: a line on standard error) and the wait ends with
    /// an error when `stopping` says so (by default never: an executable passes its signals',
    /// ``RunInterruption``; the library does not look at them itself).
    public static func open(_ path: String, waiting: ((String) -> Void)? = nil,
                            stopping: () -> Bool = { false }) throws(FrameSourceError) -> any FrameSource {
        if NetworkStream.isURL(path) {
            do { return try NetworkStream(url: path) } catch { throw .camera(error) }
        }
        let heldOpen: Int32?
        do { heldOpen = try NamedPipeInput.heldForWriter(path, waiting: waiting ?? NamedPipeInput.tellOnStandardError, stopping: stopping) } catch {
            throw .unreadable(path: path, reason: error.reason)
        }
        if let heldOpen {
            // Held until the decoder has the pipe open itself: the writer never sees it readerless.
            defer { close(heldOpen) }
            if isImage(path) { return try ImageFileSource(path: path) }
            return try VideoFileSource(path: path)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .fileNotFound(path: path)
        }
        if isDirectory.boolValue { throw .unreadable(path: path, reason: "it is a directory") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadable(path: path, reason: "permission denied")
        }
        if isImage(path) { return try ImageFileSource(path: path) }
        return try VideoFileSource(path: path)
    }
}
