import DockTrackCore
import DockTrackSystem
import CDockCV

/// An 8-bit BGR or gray image held by OpenCV (a `cv::Mat` behind the shim's `dcv_image`).
///
/// An `Image` that has left the stage that produced it is never written again, which is what
/// makes sharing it between threads safe; stages that need a changed copy make one
/// (``copy()``) or write into an image of their own.
public final class Image: @unchecked Sendable {
    package let handle: OpaquePointer

    /// An empty image, to be filled by a shim call that writes into a destination.
    init() {
        guard let handle = dcv_image_create() else { fatalError("out of memory creating an image") }
        self.handle = handle
    }

    init(taking handle: OpaquePointer) {
        self.handle = handle
    }

    deinit { dcv_image_destroy(handle) }

    /// Reads an image file (JPEG, PNG, BMP, TIFF, WebP, PNM...) as BGR.
    public convenience init(contentsOf path: String) throws(OpenCVError) {
        self.init(taking: try checkedHandle { dcv_image_read(path, $0) })
    }

    /// The picture of one part of a Motion JPEG stream, decoded as BGR; `nil` when it is passed
    /// over: cut short, not a picture, or claiming more than ``maximumPixels`` in its header
    /// (refused before anything is allocated for it).
    public static func decodingStreamPicture(_ bytes: UnsafeRawBufferPointer) -> Image? {
        let image = Image()
        let decoded = dcv_image_decode_stream_picture(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, image.handle)
        return decoded == 1 ? image : nil
    }

    /// The most pixels a picture may have to be decoded (the shim's DCV_MAX_PICTURE_PIXELS).
    public static let maximumPixels = Int(DCV_MAX_PICTURE_PIXELS)

    /// An image made from a copy of raw pixels: `channels` is 3 (BGR) or 1 (gray).
    public convenience init(pixels: [UInt8], width: Int, height: Int, channels: Int) throws(OpenCVError) {
        let handle = try pixels.withUnsafeBufferPointer { buffer throws(OpenCVError) in
            try checkedHandle {
                dcv_image_from_pixels(buffer.baseAddress, Int32(width), Int32(height), Int32(channels), width * channels, $0)
            }
        }
        self.init(taking: handle)
    }

    /// A new `size` image with `channels` (3: BGR, 1: gray) whose bytes `fill` writes (rows are
    /// continuous, `size.width * channels` bytes each); a producer's way in without a copy.
    /// `fill` returns whether it filled the image; `nil` when it did not.
    public static func filling(size: ImageSize, channels: Int,
                               _ fill: (UnsafeMutableRawBufferPointer) -> Bool) throws(OpenCVError) -> Image? {
        let image = Image(taking: try checkedHandle {
            dcv_image_allocate(Int32(size.width), Int32(size.height), Int32(channels), $0)
        })
        guard let base = dcv_image_mutable_pixels(image.handle) else { return nil }
        let buffer = UnsafeMutableRawBufferPointer(start: base, count: size.width * size.height * channels)
        return fill(buffer) ? image : nil
    }

    /// A black BGR image of `size` with `parts` copied in at their places (top-left corners,
    /// pixels); what falls outside is cut off. Parts must be BGR too.
    public static func composed(size: ImageSize, placing parts: [(Image, PixelPoint)]) throws(OpenCVError) -> Image {
        let rowBytes = size.width * 3
        let made = try filling(size: size, channels: 3) { canvas in
            canvas.initializeMemory(as: UInt8.self, repeating: 0)
            for (part, place) in parts {
                guard part.channels == 3, let source = dcv_image_pixels(part.handle) else { return false }
                let stride = dcv_image_stride(part.handle)
                let left = Int(place.x), top = Int(place.y)
                let x0 = max(0, -left), x1 = min(part.width, size.width - left)
                guard x1 > x0 else { continue }
                for row in max(0, -top)..<max(max(0, -top), min(part.height, size.height - top)) {
                    let from = source + row * stride + x0 * 3
                    let to = canvas.baseAddress! + (top + row) * rowBytes + (left + x0) * 3
                    to.copyMemory(from: from, byteCount: (x1 - x0) * 3)
                }
            }
            return true
        }
        guard let made else { throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue), message: "only BGR images can be composed") }
        return made
    }

    public var width: Int { Int(dcv_image_width(handle)) }
    public var height: Int { Int(dcv_image_height(handle)) }
    public var channels: Int { Int(dcv_image_channels(handle)) }
    public var size: ImageSize { ImageSize(width: width, height: height) }
    public var isEmpty: Bool { width == 0 || height == 0 }

    /// The pixel at (x, y) from the top-left: B, G, R (or one gray value).
    public func pixel(x: Int, y: Int) -> [UInt8] {
        guard x >= 0, y >= 0, x < width, y < height, let base = dcv_image_pixels(handle) else { return [] }
        let offset = y * dcv_image_stride(handle) + x * channels
        return (0..<channels).map { base[offset + $0] }
    }

    /// A deep copy, for drawing on without touching this image.
    public func copy() throws(OpenCVError) -> Image {
        Image(taking: try checkedHandle { dcv_image_clone(handle, $0) })
    }

    /// How ``resized(to:interpolation:)`` computes its pixels.
    public enum Interpolation: Sendable {
        /// Area averaging when shrinking (no aliasing), bilinear when growing.
        case smooth
        /// Bilinear both ways, in OpenCV's bit-exact fixed point: as HOGDescriptor makes its
        /// pyramid levels; much cheaper than area averaging when shrinking.
        case bilinearExact
        /// Bilinear both ways, OpenCV's fast path: a quick look at a picture.
        case bilinear
    }

    /// This image resized to `size` (by default area interpolation when shrinking).
    public func resized(to size: ImageSize, interpolation: Interpolation = .smooth) throws(OpenCVError) -> Image {
        if size == self.size { return self }
        let out = Image()
        let mode = switch interpolation {
        case .smooth: Int32(DCV_RESIZE_SMOOTH)
        case .bilinearExact: Int32(DCV_RESIZE_BILINEAR_EXACT)
        case .bilinear: Int32(DCV_RESIZE_BILINEAR)
        }
        try checkedCount { dcv_image_resize(handle, out.handle, Int32(size.width), Int32(size.height), mode, $0) }
        return out
    }

    /// The region `rect` (pixels, top-left origin; may reach past the border, which reads as
    /// black) resized to `size`.
    public func cropped(to rect: PixelRect, size: ImageSize) throws(OpenCVError) -> Image {
        let out = Image()
        try checkedCount {
            dcv_image_crop(handle, out.handle, Float(rect.x), Float(rect.y), Float(rect.width), Float(rect.height),
                           Int32(size.width), Int32(size.height), $0)
        }
        return out
    }

    /// This image in gray, histogram-equalized when asked.
    public func gray(equalized: Bool) throws(OpenCVError) -> Image {
        let out = Image()
        try checkedCount { dcv_image_gray(handle, out.handle, equalized ? 1 : 0, $0) }
        return out
    }

    /// A `size` copy of this image in gray, one float channel: what ``phaseShift(from:window:)`` reads.
    public func smallFloatGray(_ size: ImageSize) throws(OpenCVError) -> Image {
        let out = Image()
        try checkedCount { dcv_image_small_float_gray(handle, out.handle, Int32(size.width), Int32(size.height), $0) }
        return out
    }

    /// A Hann window of `size` (one float channel), for ``phaseShift(from:window:)``.
    public static func hannWindow(_ size: ImageSize) throws(OpenCVError) -> Image {
        let out = Image()
        try checkedCount { dcv_hann_window(out.handle, Int32(size.width), Int32(size.height), $0) }
        return out
    }

    /// The translation that moves `earlier` onto this image (both from ``smallFloatGray(_:)``,
    /// `window`'s size), by phase correlation: pixels, x right and y down, and the correlation
    /// peak's strength (0...1; low when no single shift explains the change).
    public func phaseShift(from earlier: Image, window: Image) throws(OpenCVError) -> (x: Double, y: Double, response: Double) {
        var x = 0.0, y = 0.0, response = 0.0
        try checkedCount { dcv_phase_shift(earlier.handle, handle, window.handle, &x, &y, &response, $0) }
        return (x, y, response)
    }

    /// Whether no whole-pixel shift (one axis at a time) lines this image up with `earlier`
    /// better than none (both from ``smallFloatGray(_:)``, one size): the picture did not move by
    /// half a pixel or more, and ``phaseShift(from:window:)`` can be passed over.
    public func isStill(since earlier: Image) throws(OpenCVError) -> Bool {
        var x: Int32 = 0, y: Int32 = 0
        try checkedCount { dcv_best_unit_offset(earlier.handle, handle, &x, &y, $0) }
        return x == 0 && y == 0
    }

    /// Where this picture lies in `other`, from the features both show
    /// (`dcv_feature_homography`): the homography from this image's pixels to `other`'s and the
    /// feature matches that agree with it; `nil` when too few features match.
    public func homography(to other: Image) throws(OpenCVError) -> (homography: Homography, inliers: Int)? {
        var matrix = [Double](repeating: 0, count: 9)
        var inliers: Int32 = 0, matches: Int32 = 0
        let found = try checkedCount { status in
            matrix.withUnsafeMutableBufferPointer { dcv_feature_homography(handle, other.handle, $0.baseAddress, &inliers, &matches, status) }
        }
        return found == 0 ? (Homography(matrix: matrix), Int(inliers)) : nil
    }

    /// This image mirrored left to right.
    public func mirrored() throws(OpenCVError) -> Image {
        let out = Image()
        try checkedCount { dcv_image_mirror(handle, out.handle, $0) }
        return out
    }

    /// The image as JPEG bytes (`quality` 1...100).
    public func jpeg(quality: Int = 80) throws(OpenCVError) -> [UInt8] {
        // A JPEG of an 8-bit picture is rarely above its raw size; asked again at the size needed.
        var capacity = max(4096, size.width * size.height * 3 / 2)
        while true {
            var bytes = [UInt8](repeating: 0, count: capacity)
            var needed = 0
            var status = dcv_status()
            let count = bytes.withUnsafeMutableBufferPointer {
                dcv_image_encode_jpeg(handle, Int32(quality), $0.baseAddress, capacity, &needed, &status)
            }
            if count >= 0 { return Array(bytes.prefix(count)) }
            guard needed > capacity else { throw OpenCVError(status) }
            capacity = needed
        }
    }

    /// Writes the image to a file in place; the extension picks the format. A path that is an
    /// input of the run is refused (``OutputFile/refuseInput(_:)``).
    public func write(to path: String) throws(OpenCVError) {
        do {
            try OutputFile.refuseInput(path)
        } catch {
            throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue), message: error.description)
        }
        try checkedCount { dcv_image_write(handle, path, $0) }
    }
}
