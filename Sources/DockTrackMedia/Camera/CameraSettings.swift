import DockTrackCore
import Foundation

/// What to ask a camera for. Unset values take the camera's best match to the defaults.
public struct CameraSettings: Sendable, Equatable {
    /// The frame size; default the largest the camera offers up to 1280x720.
    public var size: ImageSize?
    /// Frames per second; default 30 (when the camera lets the rate be set).
    public var framesPerSecond: Double?
    /// The pixel format; default YUYV, then MJPEG, then the camera's first.
    public var pixelFormat: FourCC?
    /// Buffers the driver fills in turn.
    public var bufferCount = 4
    /// How long to wait for a frame before giving up, seconds.
    public var frameTimeout = 5.0

    public static let defaultSize = ImageSize(width: 1280, height: 720)
    public static let defaultFramesPerSecond = 30.0

    public init(size: ImageSize? = nil, framesPerSecond: Double? = nil, pixelFormat: FourCC? = nil) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.pixelFormat = pixelFormat
    }
}

