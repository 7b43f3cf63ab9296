import Foundation

/// A point as a person reads it off a picture: pixels from the top-left corner.
public struct PixelPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Whether the box `rect`, drawn on an image of `size`, contains this point.
    public func isInside(_ rect: UnitRect, of size: ImageSize) -> Bool {
        let p = rect.pixelRect(in: size)
        return x >= p.x && x <= p.x + p.width && y >= p.y && y <= p.y + p.height
    }
}
