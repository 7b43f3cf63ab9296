import CV4L2
import Foundation

/// A V4L2 pixel format, by its four-character code ("YUYV", "MJPG", ...).
public struct FourCC: Hashable, Sendable, CustomStringConvertible, Codable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The code of four ASCII characters; `nil` unless `text` is exactly that.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        rawValue = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    public static let yuyv = FourCC("YUYV")!
    public static let mjpeg = FourCC("MJPG")!
    public static let jpeg = FourCC("JPEG")!
    public static let bgr24 = FourCC("BGR3")!
    public static let rgb24 = FourCC("RGB3")!
    public static let grey = FourCC("GREY")!

    public var description: String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }, as: UTF8.self)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let code = FourCC(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a four-character code: \(text)"))
        }
        self = code
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Converts a camera's frames (YUYV, MJPEG and whatever else libv4lconvert reads) to BGR
/// images. libv4lconvert's own ioctls (it asks the device for its name and formats) go back
/// through the device's ``V4L2Device/ioctl(_:_:)``, so they reach an emulated or fake device too.
final class PixelConverter {
    /// Why a frame could not be converted (libv4lconvert's message: a corrupt JPEG, a short frame).
    struct Failure: Error {
        var reason: String
    }

    private let converter: OpaquePointer
    /// Keeps the device alive for the callback's context pointer.
    private let context: Unmanaged<DeviceBox>

    private final class DeviceBox {
        let device: any V4L2Device
        init(_ device: any V4L2Device) { self.device = device }
    }

    init?(device: any V4L2Device) {
        let context = Unmanaged.passRetained(DeviceBox(device))
        let callback: cv4l2_ioctl_callback = { context, request, arg in
            guard let context, let arg else { return EINVAL }
            let box = Unmanaged<DeviceBox>.fromOpaque(context).takeUnretainedValue()
            return box.device.retryingIoctl(request, arg)
        }
        guard let converter = cv4l2_converter_create(device.fileDescriptor, context.toOpaque(), callback) else {
            context.release()
            return nil
        }
        self.converter = converter
        self.context = context
    }

    deinit {
        cv4l2_converter_destroy(converter)
        context.release()
    }

    /// The `bytes` of one frame in `format` as a new BGR image of the format's size.
    func image(from bytes: UnsafeMutableRawBufferPointer, format: v4l2_format) throws(PixelConverter.Failure) -> Image {
        var source = format
        let size = ImageSize(width: Int(format.fmt.pix.width), height: Int(format.fmt.pix.height))
        var destination = v4l2_format()
        destination.type = format.type
        destination.fmt.pix.width = format.fmt.pix.width
        destination.fmt.pix.height = format.fmt.pix.height
        destination.fmt.pix.pixelformat = FourCC.bgr24.rawValue
        destination.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        destination.fmt.pix.bytesperline = UInt32(size.width * 3)
        destination.fmt.pix.sizeimage = UInt32(size.width * size.height * 3)
        var failure: String?
        let image: Image?
        do {
            image = try Image.filling(size: size, channels: 3) { pixels in
                let written = cv4l2_converter_convert(
                    converter, &source, &destination,
                    bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(bytes.count),
                    pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(pixels.count))
                if written < 0 { failure = String(cString: cv4l2_converter_error(converter)) }
                return written >= 0
            }
        } catch {
            throw Failure(reason: error.description)
        }
        guard let image else { throw Failure(reason: failure ?? "libv4lconvert failed") }
        return image
    }
}
