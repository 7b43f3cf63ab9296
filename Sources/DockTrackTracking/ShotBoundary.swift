import DockTrackCore
import DockTrackMedia
import DockTrackDetection

/// Finds the cuts of a film: a frame whose picture differs at once from the one before it starts
/// a new shot. Compares 32x18 gray thumbnails of consecutive frames (about a tenth of a
/// millisecond on a 720p frame beside decoding it).
package struct ShotBoundary: Sendable {
    /// The mean difference of gray levels (0...255) between two frames' thumbnails above which
    /// the second starts a new shot. Megamind.avi's cuts measure 34 to 43; within shots
    /// Megamind, vtest.avi, carphone and motion.mov stay under 6.
    package var threshold: Float = 20
    /// The last frame's thumbnail.
    private var thumbnail: [Float]?

    package init(threshold: Float = 20) {
        self.threshold = threshold
    }

    /// Whether `image` starts a new shot after the image given last (never for the first one,
    /// nor for an image whose thumbnail cannot be made: an empty one).
    package mutating func startsShot(_ image: Image) -> Bool {
        let size = image.size
        guard let small = try? image.grayPatch(PixelRect(x: 0, y: 0, width: Double(size.width), height: Double(size.height)),
                                               width: 32, height: 18) else { return false }
        defer { thumbnail = small }
        guard let thumbnail, thumbnail.count == small.count else { return false }
        let difference = zip(small, thumbnail).reduce(Float(0)) { $0 + abs($1.0 - $1.1) } / Float(small.count)
        return difference > threshold
    }
}
