import DockTrackCore

/// One picture from a ``FrameSource``: what it shows and when it was captured.
public struct Frame: Sendable {
    /// The position of this frame in its source, from 0 (frames skipped by a stride count).
    public var index: Int
    /// When the frame was captured, in seconds from the start of the input: the presentation
    /// time for a video file, 0 for a still image, the monotonic capture clock for a camera.
    public var time: Double
    /// The pixels, 8-bit BGR.
    public var image: Image

    public init(index: Int, time: Double, image: Image) {
        self.index = index
        self.time = time
        self.image = image
    }

    public var size: ImageSize { image.size }
}
