import DockTrackCore
import DockTrackMedia
import CDockCV

/// A body as it looked on the frame a detector found it in: the gray levels of the middle of its
/// box (where the box holds the person more than the background around them), to be found again
/// on the frames between two detections.
public struct BodyTemplate: Sendable, Equatable {
    /// Template pixels per image pixel.
    public var scale: Double
    public var width: Int
    public var height: Int
    /// Gray levels, row by row.
    public var pixels: [Float]
}

/// Looks again for a body already tracked, only around where the tracker predicts it: the cheap
/// step between two full-frame body detections, which keeps each track on its own person as
/// people walk (a motion model alone drifts and swaps neighbours by the next detection).
public protocol BodyRedetector: AnyObject {
    /// How the body in `body` (a box a detection just placed, unit coordinates, lower-left
    /// origin) looks in `image`; `nil` when the box is too small or outside the picture.
    func template(of body: UnitRect, in image: Image) throws(DetectorError) -> BodyTemplate?
    /// `body` (the predicted box) moved to where `template` is found near it in `image`; `nil`
    /// when nothing there looks enough like it.
    func redetect(body: UnitRect, template: BodyTemplate, in image: Image) throws(DetectorError) -> UnitRect?
}

/// Body re-detection by normalized cross-correlation (OpenCV's `matchTemplate`) of the middle of
/// the body's box, taken on its last detection frame, in a window around the predicted box, at a
/// reduced scale (about a millisecond a body).
public final class TemplateBodyRedetector: BodyRedetector {
    /// The template's height in pixels (bodies taller than this are looked at shrunk).
    public var templateHeight = 40
    /// The correlation a match must reach.
    public var minimumScore = 0.6
    /// The middle of the box the template holds, as fractions of the box's width and height.
    public var coreWidth = 0.5, coreHeight = 0.8
    /// How far from the predicted place it looks, in fractions of the box's width and height.
    public var reachX = 0.5, reachY = 0.25

    public init() {}

    public func template(of body: UnitRect, in image: Image) throws(DetectorError) -> BodyTemplate? {
        guard let core = core(of: body, in: image.size) else { return nil }
        let scale = min(1, Double(templateHeight) / core.height)
        let width = max(4, Int((core.width * scale).rounded())), height = max(4, Int((core.height * scale).rounded()))
        let pixels = try patch(core, width: width, height: height, in: image)
        return BodyTemplate(scale: scale, width: width, height: height, pixels: pixels)
    }

    public func redetect(body: UnitRect, template: BodyTemplate, in image: Image) throws(DetectorError) -> UnitRect? {
        guard let core = core(of: body, in: image.size) else { return nil }
        let box = body.pixelRect(in: image.size)
        // The window: the template's own size in the image, centred on the predicted middle,
        // widened by the reach on every side; read at the template's scale.
        let marginX = (box.width * reachX * template.scale).rounded(), marginY = (box.height * reachY * template.scale).rounded()
        let searchWidth = template.width + 2 * Int(marginX), searchHeight = template.height + 2 * Int(marginY)
        let window = PixelRect(x: core.midX - Double(searchWidth) / template.scale / 2, y: core.midY - Double(searchHeight) / template.scale / 2,
                               width: Double(searchWidth) / template.scale, height: Double(searchHeight) / template.scale)
        let search = try patch(window, width: searchWidth, height: searchHeight, in: image)
        var bestX: Int32 = 0, bestY: Int32 = 0
        var score: Float = 0
        var status = dcv_status()
        let result = search.withUnsafeBufferPointer { area in
            template.pixels.withUnsafeBufferPointer { pattern in
                dcv_match_template(area.baseAddress, Int32(searchWidth), Int32(searchHeight), pattern.baseAddress,
                                   Int32(template.width), Int32(template.height), &bestX, &bestY, &score, &status)
            }
        }
        if result < 0 { throw .failed(detector: "body re-detection", reason: OpenCVError(status).message) }
        guard Double(score) >= minimumScore else { return nil }
        // Pixels moved (image rows grow downward, unit y upward).
        let dx = (Double(bestX) - marginX) / template.scale, dy = (Double(bestY) - marginY) / template.scale
        let size = image.size
        return UnitRect(x: body.x + dx / Double(size.width), y: body.y - dy / Double(size.height), width: body.width, height: body.height)
    }

    /// The middle of `body` in pixels, `nil` when it is not finite, under 4 px, off the picture
    /// or more than twice its size.
    private func core(of body: UnitRect, in size: ImageSize) -> PixelRect? {
        let box = body.pixelRect(in: size)
        guard [box.x, box.y, box.width, box.height].allSatisfy(\.isFinite), body.width <= 2, body.height <= 2,
              body.intersectionArea(with: UnitRect(x: 0, y: 0, width: 1, height: 1)) > 0 else { return nil }
        let width = box.width * coreWidth, height = box.height * coreHeight
        guard width >= 4, height >= 4 else { return nil }
        return PixelRect(x: box.midX - width / 2, y: box.midY - height / 2, width: width, height: height)
    }

    private func patch(_ region: PixelRect, width: Int, height: Int, in image: Image) throws(DetectorError) -> [Float] {
        do { return try image.grayPatch(region, width: width, height: height) } catch {
            throw .failed(detector: "body re-detection", reason: error.message)
        }
    }
}
