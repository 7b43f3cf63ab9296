import DockTrackCore
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a V4L2 node says about itself: identity, formats and sizes, pan/tilt/zoom controls.
package struct CameraDescription: Sendable, Equatable, Codable {
    package struct Format: Sendable, Equatable, Codable {
        package var pixelFormat: FourCC
        package var name: String
        package var compressed: Bool
        /// Discrete sizes with their frame rates; for a stepwise range, its smallest and largest.
        package var sizes: [SizeOption]
    }

    package struct SizeOption: Sendable, Equatable, Codable {
        package var width: Int
        package var height: Int
        /// Frames per second offered at this size (discrete intervals), largest first.
        package var framesPerSecond: [Double]
        package var size: ImageSize { ImageSize(width: width, height: height) }
    }

    package var path: String
    package var driver: String
    package var card: String
    package var busInfo: String
    package var capturesVideo: Bool
    package var streams: Bool
    package var formats: [Format]
    /// The UVC pan/tilt/zoom controls present, with their ranges (see ``UVCDock``).
    package var controls: [String: [Int32]]
}

extension CameraDescription {
    /// `{"path":"/dev/video0","driver":…,"card":…,"busInfo":…,"capturesVideo":true,"streams":true,
    /// "formats":[{"pixelFormat":"YUYV","name":…,"compressed":false,"sizes":[{"width":640,"height":480,
    /// "framesPerSecond":[30.0,15.0]}]}],"controls":{"pan_absolute":[-36000,36000]}}` (decodable as
    /// a `CameraDescription`).
    package var jsonLine: String {
        var line = JSONLine()
        line.add("path", path)
        line.add("driver", driver)
        line.add("card", card)
        line.add("busInfo", busInfo)
        line.add("capturesVideo", capturesVideo)
        line.add("streams", streams)
        line.add("formats", array: formats.map { format in
            var item = JSONLine()
            item.add("pixelFormat", format.pixelFormat.description)
            item.add("name", format.name)
            item.add("compressed", format.compressed)
            item.add("sizes", array: format.sizes.map { option in
                var size = JSONLine()
                size.add("width", option.width)
                size.add("height", option.height)
                size.add("framesPerSecond", numbers: option.framesPerSecond, digits: 3)
                return size
            })
            return item
        })
        var controlRanges = JSONLine()
        for (name, range) in controls.sorted(by: { $0.key < $1.key }) { controlRanges.add(name, integers: range.map(Int.init)) }
        line.add("controls", object: controlRanges)
        return line.text
    }
}

/// Reads a device's capabilities, formats, sizes and frame rates.
enum CameraQuery {
    static let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue

    static func describe(_ device: any V4L2Device) throws(V4L2Error) -> CameraDescription {
        var capability = v4l2_capability()
        try device.perform(.queryCapabilities, &capability)
        let capabilities = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
        var formats: [CameraDescription.Format] = []
        for index in 0..<64 {
            var description = v4l2_fmtdesc()
            description.index = UInt32(index)
            description.type = captureType
            do { try device.perform(.enumerateFormats, &description) } catch {
                if error.kind == .disconnected { throw error }
                break
            }
            let code = FourCC(rawValue: description.pixelformat)
            formats.append(.init(pixelFormat: code, name: text(description.description),
                                 compressed: description.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                                 sizes: try sizes(device, code)))
        }
        var controls: [String: [Int32]] = [:]
        for control in UVCControl.allCases {
            var query = v4l2_queryctrl()
            query.id = control.rawValue
            if (try? device.perform(.queryControl, &query)) != nil, query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 {
                controls["\(control)"] = [query.minimum, query.maximum]
            }
        }
        return CameraDescription(
            path: device.name, driver: text(capability.driver), card: text(capability.card), busInfo: text(capability.bus_info),
            capturesVideo: capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0,
            streams: capabilities & UInt32(V4L2_CAP_STREAMING) != 0,
            formats: formats, controls: controls)
    }

    private static func sizes(_ device: any V4L2Device, _ format: FourCC) throws(V4L2Error) -> [CameraDescription.SizeOption] {
        var options: [CameraDescription.SizeOption] = []
        for index in 0..<256 {
            var size = v4l2_frmsizeenum()
            size.index = UInt32(index)
            size.pixel_format = format.rawValue
            do { try device.perform(.enumerateFrameSizes, &size) } catch {
                if error.kind == .disconnected { throw error }
                break
            }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                let width = Int(size.discrete.width), height = Int(size.discrete.height)
                options.append(.init(width: width, height: height, framesPerSecond: try rates(device, format, width, height)))
            } else {
                let steps = size.stepwise
                options.append(.init(width: Int(steps.min_width), height: Int(steps.min_height), framesPerSecond: []))
                options.append(.init(width: Int(steps.max_width), height: Int(steps.max_height), framesPerSecond: []))
                break
            }
        }
        return options
    }

    private static func rates(_ device: any V4L2Device, _ format: FourCC, _ width: Int, _ height: Int) throws(V4L2Error) -> [Double] {
        var rates: [Double] = []
        for index in 0..<64 {
            var interval = v4l2_frmivalenum()
            interval.index = UInt32(index)
            interval.pixel_format = format.rawValue
            interval.width = UInt32(width)
            interval.height = UInt32(height)
            do { try device.perform(.enumerateFrameIntervals, &interval) } catch {
                if error.kind == .disconnected { throw error }
                break
            }
            guard interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue else { break }
            let fraction = interval.discrete
            if fraction.numerator > 0 { rates.append(Double(fraction.denominator) / Double(fraction.numerator)) }
        }
        return rates.sorted(by: >)
    }

    /// A fixed-size C char array as a string.
    static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The size to ask for: `wanted` when offered, else the offered size nearest to it in area
    /// (for the default, the largest not above it).
    static func chooseSize(from options: [CameraDescription.SizeOption], wanted: ImageSize?) -> ImageSize? {
        let sizes = options.map(\.size)
        guard !sizes.isEmpty else { return wanted }
        if let wanted {
            if sizes.contains(wanted) { return wanted }
            return sizes.min { abs($0.width * $0.height - wanted.width * wanted.height) < abs($1.width * $1.height - wanted.width * wanted.height) }
        }
        let limit = CameraSettings.defaultSize
        let fitting = sizes.filter { $0.width <= limit.width && $0.height <= limit.height }
        return (fitting.isEmpty ? sizes : fitting).max { $0.width * $0.height < $1.width * $1.height }
    }
}
