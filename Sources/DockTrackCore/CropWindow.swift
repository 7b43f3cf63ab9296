import Foundation

/// The geometry of a virtual dock: a window of a fixed aspect ratio over a wide source picture,
/// moved by pan and tilt and sized by zoom, the one place where the dock's angles and zoom turn
/// into pixels of the source and back.
///
/// The source spans `fieldOfView` radians across its width, linearly (the same angle per pixel
/// everywhere, vertically too). At zoom 1 the window is the largest of its aspect ratio that fits
/// in the source; at zoom z it is 1/z as wide and high. Pan (yaw, positive right) and tilt
/// (pitch, positive down) move its centre from the source's centre; the window never leaves the
/// source.
public struct CropWindow: Sendable, Equatable {
    public var sourceSize: ImageSize
    /// The window's width over its height.
    public var aspect: Double
    /// Radians across the source's width.
    public var fieldOfView: Double
    /// The most the window may zoom in (1: never narrower than the widest window).
    public var maximumZoom: Double

    /// `aspect` and the field of view must be positive and finite, `maximumZoom` at least 1
    /// (other values are brought into range: an aspect of 1, 70°, zoom 1).
    public init(sourceSize: ImageSize, aspect: Double, fieldOfView: Double = 70 * .pi / 180, maximumZoom: Double = 1) {
        self.sourceSize = ImageSize(width: max(1, sourceSize.width), height: max(1, sourceSize.height))
        self.aspect = aspect.isFinite && aspect > 0 ? aspect : 1
        self.fieldOfView = fieldOfView.isFinite && fieldOfView > 0 ? fieldOfView : 70 * .pi / 180
        self.maximumZoom = maximumZoom.isFinite ? max(1, maximumZoom) : 1
    }

    /// The window at zoom 1: the widest of its aspect ratio inside the source (pixels).
    public var widest: (width: Double, height: Double) {
        let w = Double(sourceSize.width), h = Double(sourceSize.height)
        return aspect >= w / h ? (w, w / aspect) : (h * aspect, h)
    }

    /// Radians per source pixel.
    public var radiansPerPixel: Double { fieldOfView / Double(sourceSize.width) }

    /// `zoom` brought into 1...maximumZoom (1 for a value that is not a number).
    public func clampZoom(_ zoom: Double) -> Double {
        zoom.isNaN ? 1 : min(max(zoom, 1), maximumZoom)
    }

    /// The window's size at `zoom` (pixels).
    public func size(at zoom: Double) -> (width: Double, height: Double) {
        let z = clampZoom(zoom), w = widest
        return (w.width / z, w.height / z)
    }

    /// The part of the source (pixels, top-left origin) seen at `pose` and `zoom`, kept inside
    /// the source.
    public func crop(at pose: DockOrientation, zoom: Double) -> PixelRect {
        let (w, h) = size(at: zoom)
        let sw = Double(sourceSize.width), sh = Double(sourceSize.height)
        let yaw = pose.y.isFinite ? pose.y : 0, pitch = pose.x.isFinite ? pose.x : 0
        let cx = min(max(sw / 2 + yaw / radiansPerPixel, w / 2), sw - w / 2)
        let cy = min(max(sh / 2 + pitch / radiansPerPixel, h / 2), sh - h / 2)
        return PixelRect(x: cx - w / 2, y: cy - h / 2, width: w, height: h)
    }

    /// The pose whose window is `crop` (its centre; the inverse of ``crop(at:zoom:)``).
    public func pose(of crop: PixelRect) -> DockOrientation {
        DockOrientation(x: (crop.midY - Double(sourceSize.height) / 2) * radiansPerPixel,
                        y: (crop.midX - Double(sourceSize.width) / 2) * radiansPerPixel, z: 0)
    }

    /// The pose at `zoom` whose window shows `point` (unit coordinates of the source, lower-left
    /// origin) at `spot` (unit coordinates of the window, lower-left origin), as far as the window
    /// can go inside the source.
    public func pose(showing point: (x: Double, y: Double), at spot: (x: Double, y: Double), zoom: Double) -> DockOrientation {
        let (w, h) = size(at: zoom)
        let px = point.x * Double(sourceSize.width), py = (1 - point.y) * Double(sourceSize.height)
        let wanted = PixelRect(x: px - spot.x * w, y: py - (1 - spot.y) * h, width: w, height: h)
        return pose(of: crop(at: pose(of: wanted), zoom: zoom))
    }

    /// The pan and tilt ranges that keep the window inside the source at `zoom`, with the
    /// speeds and accelerations of `base`.
    public func limits(at zoom: Double, from base: DockLimits) -> DockLimits {
        let (w, h) = size(at: zoom)
        var limits = base
        let pan = max(0, Double(sourceSize.width) - w) / 2 * radiansPerPixel
        let tilt = max(0, Double(sourceSize.height) - h) / 2 * radiansPerPixel
        limits.yaw.range = -pan...pan
        limits.pitch.range = -tilt...tilt
        limits.roll = AxisLimits(range: 0...0, maximumSpeed: 0, maximumAcceleration: 0)
        return limits
    }

    /// The window as a camera the framing controller can aim (angles across its width and
    /// height, linear as the source's).
    public func camera(at zoom: Double) -> CameraModel {
        let (w, h) = size(at: zoom)
        return CameraModel(horizontalFieldOfView: w * radiansPerPixel, verticalFieldOfView: h * radiansPerPixel)
    }

    /// `rect` (unit coordinates of the source, lower-left origin) in unit coordinates of the
    /// window `crop` (lower-left origin); outside 0...1 where it is outside the window.
    public func rect(_ rect: UnitRect, in crop: PixelRect) -> UnitRect {
        let sw = Double(sourceSize.width), sh = Double(sourceSize.height)
        let bottom = sh - (crop.y + crop.height)  // the window's lower edge, pixels from the source's bottom
        return UnitRect(x: (rect.x * sw - crop.x) / crop.width, y: (rect.y * sh - bottom) / crop.height,
                        width: rect.width * sw / crop.width, height: rect.height * sh / crop.height)
    }

    /// The window `crop` in unit coordinates of the source (lower-left origin).
    public func unitRect(of crop: PixelRect) -> UnitRect {
        let sw = Double(sourceSize.width), sh = Double(sourceSize.height)
        return UnitRect(x: crop.x / sw, y: 1 - (crop.y + crop.height) / sh, width: crop.width / sw, height: crop.height / sh)
    }
}
