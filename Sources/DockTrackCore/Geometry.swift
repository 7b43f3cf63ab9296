/// Sizes and rectangles in the three coordinate systems DockTrack meets, and the only place that
/// converts between them.
///
/// - ``PixelRect``: pixels of one image, origin at the **top-left** (OpenCV, image files).
/// - ``UnitRect``: unit coordinates (0...1) with the origin at the **lower-left**: every
///   observation and tracked subject (Vision's and DockKit's convention).
/// - Regions of interest and selection points use unit coordinates with the origin at the
///   **upper-left**; they convert through ``UnitRect/init(upperLeftOrigin:)``.

/// The size of an image in pixels.
public struct ImageSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }

    /// This size scaled so that its width is at most `maxWidth`, keeping the aspect ratio.
    public func fitting(maxWidth: Int) -> ImageSize {
        guard maxWidth > 0, width > maxWidth else { return self }
        let scale = Double(maxWidth) / Double(width)
        return ImageSize(width: maxWidth, height: max(1, Int((Double(height) * scale).rounded())))
    }
}

/// A rectangle in pixels of an image, origin at the top-left, y growing downwards.
public struct PixelRect: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var area: Double { max(0, width) * max(0, height) }
    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }

    /// This rectangle in an image `factor` times as large.
    public func scaled(by factor: Double) -> PixelRect {
        PixelRect(x: x * factor, y: y * factor, width: width * factor, height: height * factor)
    }

    /// The intersection over union with `other` (``UnitRect``'s arithmetic: which way the axes
    /// run changes no overlap).
    public func intersectionOverUnion(_ other: PixelRect) -> Double {
        UnitRect(x: x, y: y, width: width, height: height)
            .intersectionOverUnion(UnitRect(x: other.x, y: other.y, width: other.width, height: other.height))
    }
}

/// A rectangle in unit coordinates (0...1 of the image's width and height), origin at the
/// lower-left corner, y growing upwards: the convention of observations and subjects.
public struct UnitRect: Hashable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var minX: Double { x }
    public var maxX: Double { x + width }
    public var minY: Double { y }
    public var maxY: Double { y + height }
    public var midX: Double { x + width / 2 }
    public var midY: Double { y + height / 2 }
    public var area: Double { max(0, width) * max(0, height) }

    /// Whether this can be a region of the picture (a region of interest): finite, with a size,
    /// inside the unit square to 1e-4 (the wire's rounding).
    public var isRegionOfPicture: Bool {
        [x, y, width, height].allSatisfy(\.isFinite) && width > 0 && height > 0
            && minX >= -1e-4 && minY >= -1e-4 && maxX <= 1 + 1e-4 && maxY <= 1 + 1e-4
    }

    /// The pixel rectangle `rect` of an image of `size`, in unit coordinates with the origin
    /// at the lower-left, clipped to the image.
    public init(_ rect: PixelRect, in size: ImageSize) {
        let w = Double(size.width), h = Double(size.height)
        let left = min(max(rect.x, 0), w), right = min(max(rect.x + rect.width, 0), w)
        let top = min(max(rect.y, 0), h), bottom = min(max(rect.y + rect.height, 0), h)
        self.init(x: left / w, y: (h - bottom) / h, width: (right - left) / w, height: (bottom - top) / h)
    }

    /// This rectangle in pixels of an image of `size`, origin at the top-left.
    public func pixelRect(in size: ImageSize) -> PixelRect {
        let w = Double(size.width), h = Double(size.height)
        return PixelRect(x: x * w, y: (1 - maxY) * h, width: width * w, height: height * h)
    }

    /// A rectangle given in unit coordinates with the origin at the upper-left (regions of
    /// interest, selection), converted to this type's lower-left origin.
    public init(upperLeftOrigin r: UnitRect) {
        self.init(x: r.x, y: 1 - r.y - r.height, width: r.width, height: r.height)
    }

    /// A box as a person types it on a command line, `x,y,width,height` in unit coordinates
    /// with the origin at the upper-left (as read off the picture), with this type's lower-left
    /// origin; `nil` unless it is four numbers making a region of the picture.
    public init?(upperLeftText text: String) {
        let values = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard values.count == 4 else { return nil }
        self.init(upperLeftOrigin: UnitRect(x: values[0], y: values[1], width: values[2], height: values[3]))
        guard isRegionOfPicture else { return nil }
    }

    /// This rectangle with its origin at the upper-left (a region of interest on the wire, from
    /// this type's lower-left): the inverse of ``init(upperLeftOrigin:)``.
    public var upperLeftOrigin: UnitRect {
        UnitRect(x: x, y: 1 - y - height, width: width, height: height)
    }

    /// The area this rectangle shares with `other`.
    public func intersectionArea(with other: UnitRect) -> Double {
        let iw = min(maxX, other.maxX) - max(minX, other.minX)
        let ih = min(maxY, other.maxY) - max(minY, other.minY)
        return iw > 0 && ih > 0 ? iw * ih : 0
    }

    /// The intersection over union with `other`, 0 when they do not overlap.
    public func intersectionOverUnion(_ other: UnitRect) -> Double {
        let shared = intersectionArea(with: other)
        return shared > 0 ? shared / (area + other.area - shared) : 0
    }

    /// The overlap as a fraction of the smaller rectangle's area: 1 when one lies inside the other.
    public func intersectionOverSmaller(_ other: UnitRect) -> Double {
        let shared = intersectionArea(with: other)
        return shared > 0 ? shared / Swift.min(area, other.area) : 0
    }

    /// Whether the point (unit coordinates, lower-left origin) lies inside.
    public func contains(x px: Double, y py: Double) -> Bool {
        px >= minX && px <= maxX && py >= minY && py <= maxY
    }
}

extension UnitRect {
    /// The smallest rectangle holding both.
    public func union(_ other: UnitRect) -> UnitRect {
        let x0 = min(minX, other.minX), y0 = min(minY, other.minY)
        return UnitRect(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }

    /// Whether it comes within `margin` (a share of the picture) of the left or right edge of the unit square.
    public func reachesSide(within margin: Double) -> Bool {
        minX < margin || maxX > 1 - margin
    }

    /// Whether it comes within `margin` (a share of the picture) of any edge of the unit square.
    public func reachesEdge(within margin: Double) -> Bool {
        reachesSide(within: margin) || minY < margin || maxY > 1 - margin
    }

    /// This rectangle cut to the unit square.
    public func clippedToUnit() -> UnitRect {
        let x0 = Swift.max(0, Swift.min(1, minX)), x1 = Swift.max(0, Swift.min(1, maxX))
        let y0 = Swift.max(0, Swift.min(1, minY)), y1 = Swift.max(0, Swift.min(1, maxY))
        return UnitRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// A point in unit coordinates, origin at the lower-left (as ``UnitRect``).
public struct UnitPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// A point given with the origin at the upper-left (a tap on the picture).
    public init(upperLeftOriginX x: Double, y: Double) {
        self.init(x: x, y: 1 - y)
    }

    /// This point in pixels of an image of `size`, origin at the top-left.
    public func pixel(in size: ImageSize) -> (x: Double, y: Double) {
        (x * Double(size.width), (1 - y) * Double(size.height))
    }
}
