import DockTrackCore
import CV4L2
import Foundation


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
