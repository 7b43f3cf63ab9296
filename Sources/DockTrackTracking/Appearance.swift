import DockTrackCore
import DockTrackMedia

/// What a person's clothing looks like: a coarse colour histogram (4 levels each of blue,
/// green and red) of the middle of their body box. Tells apart two people whose boxes meet.
package struct Appearance: Sendable, Equatable {
    /// 64 bins summing to 1.
    package private(set) var bins: [Double]

    /// The appearance of the body in `rect` (unit coordinates, lower-left origin) of `image`:
    /// its inner part (20% off each side, 10% off the top and bottom) so background stays out.
    package init(of rect: UnitRect, in image: Image) throws(OpenCVError) {
        let box = rect.pixelRect(in: image.size)
        let inner = PixelRect(x: box.x + 0.2 * box.width, y: box.y + 0.1 * box.height, width: max(1, 0.6 * box.width), height: max(1, 0.8 * box.height))
        let pixels = try image.colorPatch(inner, width: 8, height: 16)
        var bins = [Double](repeating: 0, count: 64)
        for i in stride(from: 0, to: pixels.count, by: 3) {
            let b = min(3, Int(pixels[i] / 64)), g = min(3, Int(pixels[i + 1] / 64)), r = min(3, Int(pixels[i + 2] / 64))
            bins[b * 16 + g * 4 + r] += 1
        }
        let total = bins.reduce(0, +)
        self.bins = bins.map { $0 / max(1, total) }
    }

    /// The Hellinger distance to `other`: 0 for the same colours, 1 for none in common.
    package func distance(to other: Appearance) -> Double {
        var coefficient = 0.0
        for i in bins.indices { coefficient += (bins[i] * other.bins[i]).squareRoot() }
        return max(0, 1 - coefficient).squareRoot()
    }

    /// Moves this appearance towards `new` by `rate` (0...1).
    package mutating func blend(_ new: Appearance, rate: Double) {
        for i in bins.indices { bins[i] = bins[i] * (1 - rate) + new.bins[i] * rate }
    }
}
