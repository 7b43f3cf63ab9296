import DockTrackCore
import Foundation

/// Why a camera could not be opened or stopped delivering. Each description is one line naming
/// the device and what to do.
public enum CameraError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing at the path (or it went away before it could be opened).
    case notFound(path: String)
    case permissionDenied(path: String)
    /// Another program is capturing from it.
    case busy(path: String)
    /// A V4L2 node that does not capture video with streaming I/O (a metadata node, an output).
    case notACaptureDevice(path: String, card: String)
    /// None of the camera's formats can be converted, or the one asked for is not offered.
    case noUsableFormat(path: String, offered: [String])
    /// The camera went away while streaming (unplugged) after `framesRead` frames.
    case disconnected(path: String, framesRead: Int)
    /// No frame arrived within `seconds`.
    case noFrames(path: String, seconds: Double, framesRead: Int)
    /// A frame's bytes could not be converted to an image.
    case conversion(path: String, reason: String)
    /// Any other failed call.
    case failed(path: String, V4L2Error)
    /// No stream answered at a network camera's URL.
    case unreachable(url: String, reason: String)

    public var description: String {
        switch self {
        case .notFound(let path):
            return "\(path): no camera there (docktrack devices lists the cameras)"
        case .permissionDenied(let path):
            return "\(path): permission denied (is the user in the 'video' group?)"
        case .busy(let path):
            return "\(path): the camera is busy (another program is capturing from it)"
        case .notACaptureDevice(let path, let card):
            return "\(path): '\(card)' is not a video capture device with streaming I/O"
        case .noUsableFormat(let path, let offered):
            return "\(path): no usable pixel format (the camera offers \(offered.isEmpty ? "none" : offered.joined(separator: ", ")))"
        case .disconnected(let path, let framesRead):
            return "\(path): the camera was disconnected after \(framesRead) frames"
        case .noFrames(let path, let seconds, let framesRead):
            return "\(path): no frame for \(String(format: "%g", seconds)) s (after \(framesRead) frames)"
        case .conversion(let path, let reason):
            return "\(path): a frame could not be converted (\(reason))"
        case .failed(let path, let error):
            return "\(path): \(error)"
        case .unreachable(let url, let reason):
            return "\(url): \(reason) (is the camera on, and is the URL its stream's?)"
        }
    }

    /// The error for a failed call on the device at `path`.
    static func from(_ error: V4L2Error, path: String, framesRead: Int = 0) -> CameraError {
        switch error.kind {
        case .disconnected: framesRead > 0 ? .disconnected(path: path, framesRead: framesRead) : .notFound(path: path)
        case .busy: .busy(path: path)
        case .permissionDenied: .permissionDenied(path: path)
        case .unsupported, .wouldBlock, .other:
            error.call == "open" && error.code == ENOENT ? .notFound(path: path) : .failed(path: path, error)
        }
    }
}

