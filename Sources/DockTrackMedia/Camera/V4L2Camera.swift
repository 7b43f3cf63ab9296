import DockTrackCore
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a camera could not be opened or stopped delivering. Each description is one line naming
/// the device and what to do.
public enum CameraError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing at the path (or it went away before it could be opened).
    case notFound(path: String)
    case permissionDenied(path: String)
    /// Another program is capturing from it.
    case busy(path: String)
    /// A V4L2 node that does not capture video with streaming I/O (a metadata node, an output).
    case notACaptureDevice(path: String, card: String)
    /// None of the camera's formats can be converted, or the one asked for is not offered.
    case noUsableFormat(path: String, offered: [String])
    /// The camera went away while streaming (unplugged) after `framesRead` frames.
    case disconnected(path: String, framesRead: Int)
    /// No frame arrived within `seconds`.
    case noFrames(path: String, seconds: Double, framesRead: Int)
    /// A frame's bytes could not be converted to an image.
    case conversion(path: String, reason: String)
    /// Any other failed call.
    case failed(path: String, V4L2Error)

    public var description: String {
        switch self {
        case .notFound(let path):
            return "\(path): no camera there (docktrack devices lists the cameras)"
        case .permissionDenied(let path):
            return "\(path): permission denied (is the user in the 'video' group?)"
        case .busy(let path):
            return "\(path): the camera is busy (another program is capturing from it)"
        case .notACaptureDevice(let path, let card):
            return "\(path): '\(card)' is not a video capture device with streaming I/O"
        case .noUsableFormat(let path, let offered):
            return "\(path): no usable pixel format (the camera offers \(offered.isEmpty ? "none" : offered.joined(separator: ", ")))"
        case .disconnected(let path, let framesRead):
            return "\(path): the camera was disconnected after \(framesRead) frames"
        case .noFrames(let path, let seconds, let framesRead):
            return "\(path): no frame for \(String(format: "%g", seconds)) s (after \(framesRead) frames)"
        case .conversion(let path, let reason):
            return "\(path): a frame could not be converted (\(reason))"
        case .failed(let path, let error):
            return "\(path): \(error)"
        }
    }

    /// The error for a failed call on the device at `path`.
    static func from(_ error: V4L2Error, path: String, framesRead: Int = 0) -> CameraError {
        switch error.kind {
        case .disconnected: framesRead > 0 ? .disconnected(path: path, framesRead: framesRead) : .notFound(path: path)
        case .busy: .busy(path: path)
        case .permissionDenied: .permissionDenied(path: path)
        case .unsupported, .wouldBlock, .other:
            error.call == "open" && error.code == ENOENT ? .notFound(path: path) : .failed(path: path, error)
        }
    }
}

/// What to ask a camera for. Unset values take the camera's best match to the defaults.
public struct CameraSettings: Sendable, Equatable {
    /// The frame size; default the largest the camera offers up to 1280x720.
    public var size: ImageSize?
    /// Frames per second; default 30 (when the camera lets the rate be set).
    public var framesPerSecond: Double?
    /// The pixel format; default YUYV, then MJPEG, then the camera's first.
    public var pixelFormat: FourCC?
    /// Buffers the driver fills in turn.
    public var bufferCount = 4
    /// How long to wait for a frame before giving up, seconds.
    public var frameTimeout = 5.0

    public static let defaultSize = ImageSize(width: 1280, height: 720)
    public static let defaultFramesPerSecond = 30.0

    public init(size: ImageSize? = nil, framesPerSecond: Double? = nil, pixelFormat: FourCC? = nil) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.pixelFormat = pixelFormat
    }
}

/// What a V4L2 node says about itself: identity, formats and sizes, pan/tilt/zoom controls.
public struct CameraDescription: Sendable, Equatable, Codable {
    public struct Format: Sendable, Equatable, Codable {
        public var pixelFormat: FourCC
        public var name: String
        public var compressed: Bool
        /// Discrete sizes with their frame rates; for a stepwise range, its smallest and largest.
        public var sizes: [SizeOption]
    }

    public struct SizeOption: Sendable, Equatable, Codable {
        public var width: Int
        public var height: Int
        /// Frames per second offered at this size (discrete intervals), largest first.
        public var framesPerSecond: [Double]
        public var size: ImageSize { ImageSize(width: width, height: height) }
    }

    public var path: String
    public var driver: String
    public var card: String
    public var busInfo: String
    public var capturesVideo: Bool
    public var streams: Bool
    public var formats: [Format]
    /// The UVC pan/tilt/zoom controls present, with their ranges (see ``UVCDock``).
    public var controls: [String: [Int32]]
}

extension CameraDescription {
    /// `{"path":"/dev/video0","driver":…,"card":…,"busInfo":…,"capturesVideo":true,"streams":true,
    /// "formats":[{"pixelFormat":"YUYV","name":…,"compressed":false,"sizes":[{"width":640,"height":480,
    /// "framesPerSecond":[30.0,15.0]}]}],"controls":{"pan_absolute":[-36000,36000]}}` (decodable as
    /// a `CameraDescription`).
    public var jsonLine: String {
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

/// A live V4L2 camera as a ``FrameSource``: memory-mapped streaming, frames converted to BGR by
/// libv4lconvert straight into the image, stamped with the monotonic capture clock.
///
/// The newest frame wins: each ``nextFrame()`` takes every buffer the driver has filled, keeps the
/// latest, and gives the older ones straight back, so a slow consumer sees fresh frames and never
/// a queue (the frames passed over are counted in ``droppedFrames``).
public final class V4L2Camera: FrameSource {
    public let device: any V4L2Device
    public let description: CameraDescription
    /// The format the camera delivers (as set, after the driver's adjustments).
    public let pixelFormat: FourCC
    public let info: MediaInfo
    /// The monotonic time frame times count from (seconds): ``Frame/time`` is capture time minus this.
    public let clockOrigin: Double
    /// Frames delivered so far.
    public private(set) var framesRead = 0
    /// Frames the camera captured that were passed over for a newer one, or lost by the driver.
    public private(set) var droppedFrames = 0

    private var format: v4l2_format
    private var buffers: [(address: UnsafeMutableRawPointer, length: Int)] = []
    /// A frame copied out of a buffer the driver may unmap under us (PipeWire's emulation).
    private var scratch: [UInt8] = []
    private var streaming = false
    private let converter: PixelConverter
    private let frameTimeout: Double
    private let clock: @Sendable () -> Double
    private var lastSequence: UInt32?
    private var path: String { device.name }

    /// Opens the camera at `path` and starts streaming.
    public convenience init(path: String, settings: CameraSettings = CameraSettings(), clockOrigin: Double? = nil) throws(CameraError) {
        let device: V4L2DeviceFile
        do { device = try V4L2DeviceFile(path: path) } catch { throw CameraError.from(error, path: path) }
        try self.init(device: device, settings: settings, clockOrigin: clockOrigin)
    }

    /// Sets `device` up as `settings` ask and starts streaming. `clock` is the monotonic clock
    /// (injected for tests); `clockOrigin` defaults to now.
    public init(device: any V4L2Device, settings: CameraSettings = CameraSettings(), clockOrigin: Double? = nil,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now) throws(CameraError) {
        let path = device.name
        self.device = device
        self.clock = clock
        self.clockOrigin = clockOrigin ?? clock()
        frameTimeout = settings.frameTimeout
        do {
            description = try CameraQuery.describe(device)
        } catch {
            throw CameraError.from(error, path: path)
        }
        guard description.capturesVideo, description.streams else {
            throw .notACaptureDevice(path: path, card: description.card)
        }
        let offered = description.formats.map { $0.pixelFormat.description }
        let chosen: CameraDescription.Format?
        if let wanted = settings.pixelFormat {
            chosen = description.formats.first { $0.pixelFormat == wanted }
        } else {
            chosen = description.formats.first { $0.pixelFormat == .yuyv }
                ?? description.formats.first { $0.pixelFormat == .mjpeg }
                ?? description.formats.first
        }
        guard let chosen else { throw .noUsableFormat(path: path, offered: offered) }
        let size = CameraQuery.chooseSize(from: chosen.sizes, wanted: settings.size) ?? CameraSettings.defaultSize

        format = v4l2_format()
        format.type = CameraQuery.captureType
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.pixelformat = chosen.pixelFormat.rawValue
        format.fmt.pix.field = V4L2_FIELD_ANY.rawValue
        do {
            try device.perform(.setFormat, &format)
        } catch {
            throw CameraError.from(error, path: path)
        }
        pixelFormat = FourCC(rawValue: format.fmt.pix.pixelformat)
        guard let converter = PixelConverter(device: device) else {
            throw .conversion(path: path, reason: "libv4lconvert could not be set up")
        }
        self.converter = converter

        var framesPerSecond: Double?
        var parameters = v4l2_streamparm()
        parameters.type = CameraQuery.captureType
        if (try? device.perform(.getStreamParameters, &parameters)) != nil,
           parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 {
            let rate = settings.framesPerSecond ?? CameraSettings.defaultFramesPerSecond
            parameters.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32((rate * 1000).rounded()))
            _ = try? device.perform(.setStreamParameters, &parameters)
        }
        let interval = parameters.parm.capture.timeperframe
        if interval.numerator > 0, interval.denominator > 0 {
            framesPerSecond = Double(interval.denominator) / Double(interval.numerator)
        }
        info = MediaInfo(name: path, kind: .camera,
                         size: ImageSize(width: Int(format.fmt.pix.width), height: Int(format.fmt.pix.height)),
                         framesPerSecond: framesPerSecond)
        do {
            try startStreaming(bufferCount: settings.bufferCount)
        } catch {
            releaseBuffers()
            throw CameraError.from(error, path: path)
        }
    }

    deinit { stop() }

    private func startStreaming(bufferCount: Int) throws(V4L2Error) {
        var request = v4l2_requestbuffers()
        request.count = UInt32(max(2, bufferCount))
        request.type = CameraQuery.captureType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try device.perform(.requestBuffers, &request)
        guard request.count >= 1 else { throw V4L2Error(.requestBuffers, code: ENOMEM) }
        for index in 0..<request.count {
            var buffer = emptyBuffer()
            buffer.index = index
            try device.perform(.queryBuffer, &buffer)
            let length = Int(buffer.length)
            switch device.map(length: length, offset: Int(buffer.m.offset)) {
            case .success(let address): buffers.append((address, length))
            case .failure(let error): throw error
            }
        }
        for index in buffers.indices {
            var buffer = emptyBuffer()
            buffer.index = UInt32(index)
            try device.perform(.queueBuffer, &buffer)
        }
        var type = Int32(CameraQuery.captureType)
        try device.perform(.streamOn, &type)
        streaming = true
    }

    /// PipeWire's V4L2 emulation (pw-v4l2 of Debian 12's PipeWire 0.3.65) hands out PipeWire's
    /// own mappings; its munmap only drops its bookkeeping, and once its source has gone away
    /// that bookkeeping points at freed memory: unmapping after an unplug read freed memory and
    /// crashed (in munmap, or at a later munmap of a new buffer at a reused address). Closing
    /// the device destroys its stream, which unmaps them; so on that driver nothing is unmapped.
    private var unmapsBuffers: Bool { description.driver != "PipeWire" }

    /// Whether the driver still knows buffer `index` (QUERYBUF does not answer EINVAL).
    private func driverHasBuffer(_ index: Int) -> Bool {
        var buffer = emptyBuffer()
        buffer.index = UInt32(index)
        do {
            try device.perform(.queryBuffer, &buffer)
            return true
        } catch {
            return error.code != EINVAL
        }
    }

    private func emptyBuffer() -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.type = CameraQuery.captureType
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        return buffer
    }

    /// Stops streaming and gives the buffers back; the camera is free for another program.
    /// Later ``nextFrame()`` calls return `nil`.
    public func stop() {
        if streaming {
            var type = Int32(CameraQuery.captureType)
            _ = try? device.perform(.streamOff, &type)
            streaming = false
        }
        releaseBuffers()
    }

    private func releaseBuffers() {
        guard !buffers.isEmpty else { return }
        // Unmap only the buffers the driver still has (a buffer it dropped, QUERYBUF EINVAL,
        // is not its to unmap any more), and none on PipeWire's emulation (see below).
        for (index, buffer) in buffers.enumerated() where unmapsBuffers && driverHasBuffer(index) {
            device.unmap(buffer.address, length: buffer.length)
        }
        buffers.removeAll()
        var request = v4l2_requestbuffers()
        request.type = CameraQuery.captureType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        _ = try? device.perform(.requestBuffers, &request)
    }

    /// How often a camera that sends nothing is checked for having gone away (seconds).
    public static let lossCheckInterval = 0.5

    public func nextFrame() throws(FrameSourceError) -> Frame? {
        do {
            return try newestFrame()
        } catch {
            throw .camera(error)
        }
    }

    private func newestFrame() throws(CameraError) -> Frame? {
        guard streaming else { return nil }
        var newest: v4l2_buffer?
        var waited = 0.0
        while newest == nil {
            // Wait in slices: a stream whose device went away without a wake-up (PipeWire's
            // emulation drops its buffers silently) is noticed within a slice, not at the timeout.
            let slice = min(Self.lossCheckInterval, frameTimeout - waited)
            switch device.waitReadable(timeout: slice) {
            case .readable: break
            case .timedOut:
                waited += slice
                if !driverHasBuffer(0) { throw .disconnected(path: path, framesRead: framesRead) }
                if waited >= frameTimeout - 1e-9 { throw .noFrames(path: path, seconds: frameTimeout, framesRead: framesRead) }
                continue
            case .failed: throw .disconnected(path: path, framesRead: framesRead)
            }
            newest = try drainFilledBuffers()
        }
        let buffer = newest!
        defer { requeue(buffer) }
        let captured = captureTime(of: buffer)
        let bytes = UnsafeMutableRawBufferPointer(start: buffers[Int(buffer.index)].address,
                                                  count: min(Int(buffer.bytesused), buffers[Int(buffer.index)].length))
        let converted: Result<Image, PixelConverter.Failure>
        if unmapsBuffers {
            converted = Result { () throws(PixelConverter.Failure) in try converter.image(from: bytes, format: format) }
        } else {
            // PipeWire's emulation may unmap a dequeued buffer at any moment when its source
            // goes away (a SIGSEGV inside libv4lconvert, seen under ThreadSanitizer's slower
            // timing): copy it out with a read that fails instead of faulting, then convert.
            if scratch.count < bytes.count { scratch = [UInt8](repeating: 0, count: bytes.count) }
            let count = bytes.count
            let copied = scratch.withUnsafeMutableBytes { cv4l2_copy_mapped($0.baseAddress, bytes.baseAddress, count) }
            guard copied == count else { throw .disconnected(path: path, framesRead: framesRead) }
            converted = scratch.withUnsafeMutableBytes { raw in
                Result { () throws(PixelConverter.Failure) in
                    try converter.image(from: UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]), format: format)
                }
            }
        }
        let image: Image
        switch converted {
        case .success(let converted): image = converted
        case .failure(let error): throw .conversion(path: path, reason: error.reason)
        }
        defer { framesRead += 1 }
        return Frame(index: framesRead, time: captured - clockOrigin, image: image)
    }

    /// Dequeues every filled buffer; returns the newest (the caller queues it back) and queues
    /// the others back at once. `nil` when none was ready after all.
    private func drainFilledBuffers() throws(CameraError) -> v4l2_buffer? {
        var newest: v4l2_buffer?
        while true {
            var buffer = emptyBuffer()
            do {
                try device.perform(.dequeueBuffer, &buffer)
            } catch {
                if error.kind == .wouldBlock { break }
                if let newest { requeue(newest) }
                // A stream that ran and now refuses DQBUF has lost its device: a USB camera says
                // ENODEV, PipeWire's emulation says EINVAL when its source goes away, EIO is a
                // driver giving up.
                if error.kind == .disconnected || error.code == EINVAL || error.code == EIO {
                    throw .disconnected(path: path, framesRead: framesRead)
                }
                throw CameraError.from(error, path: path, framesRead: max(1, framesRead))
            }
            guard Int(buffer.index) < buffers.count else { continue }
            if let lastSequence, buffer.sequence > lastSequence + 1 {
                droppedFrames += Int(buffer.sequence - lastSequence - 1)
            }
            lastSequence = buffer.sequence
            if buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 || buffer.bytesused == 0 {
                droppedFrames += 1
                requeue(buffer)
                continue
            }
            if let older = newest {
                droppedFrames += 1
                requeue(older)
            }
            newest = buffer
        }
        return newest
    }

    private func requeue(_ buffer: v4l2_buffer) {
        var buffer = buffer
        buffer.flags = 0
        buffer.bytesused = 0
        _ = try? device.perform(.queueBuffer, &buffer)
    }

    /// The buffer's monotonic timestamp when the driver gives one that is plausible (not in the
    /// future, under 2 s old), else the time it was dequeued.
    private func captureTime(of buffer: v4l2_buffer) -> Double {
        let now = clock()
        let monotonic = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        let stamp = Double(buffer.timestamp.tv_sec) + Double(buffer.timestamp.tv_usec) / 1e6
        if monotonic, stamp > 0, stamp <= now, now - stamp < 2 { return stamp }
        return now
    }
}

/// A frame source fed live by a capture clock: frame times count from ``clockOrigin`` on the
/// monotonic clock, so `MonotonicClock.now() - clockOrigin - frame.time` is how old a frame is.
public protocol LiveFrameSource: FrameSource {
    var clockOrigin: Double { get }
    /// Frames captured but never delivered (a newer one was, or the driver lost them).
    var droppedFrames: Int { get }
}

extension V4L2Camera: LiveFrameSource {}

/// What happened to a camera while ``ReconnectingCamera`` was reading it.
public enum CameraEvent: Sendable, Equatable {
    /// The camera stopped delivering (unplugged, or no frame within the timeout).
    case lost(CameraError)
    /// It is back and streaming again, after `seconds` away.
    case reconnected(path: String, seconds: Double)
}

/// A camera that, when it disappears, waits for it to come back and resumes: frame indices go
/// on counting and frame times stay on the same clock. Errors that waiting cannot fix (no
/// permission, not a capture device, no usable format) still end the stream.
public final class ReconnectingCamera: LiveFrameSource {
    public typealias Opener = (_ clockOrigin: Double) throws(CameraError) -> V4L2Camera

    private let open: Opener
    private var camera: V4L2Camera?
    private let retryInterval: Double
    private let giveUpAfter: Double?
    private let clock: @Sendable () -> Double
    private let sleep: (Double) -> Void
    private let onEvent: (CameraEvent) -> Void
    private var delivered = 0
    private var droppedBefore = 0
    public let clockOrigin: Double
    public let info: MediaInfo

    /// Opens the first camera at once (its errors throw). `giveUpAfter` seconds of waiting for
    /// a lost camera end the stream (`nil`: wait for ever).
    public init(clock: @escaping @Sendable () -> Double = MonotonicClock.now, retryInterval: Double = 0.5,
                giveUpAfter: Double? = nil, sleep: @escaping (Double) -> Void = { Thread.sleep(forTimeInterval: $0) },
                onEvent: @escaping (CameraEvent) -> Void, open: @escaping Opener) throws(CameraError) {
        self.clock = clock
        self.retryInterval = retryInterval
        self.giveUpAfter = giveUpAfter
        self.sleep = sleep
        self.onEvent = onEvent
        self.open = open
        let origin = clock()
        clockOrigin = origin
        let first = try open(origin)
        camera = first
        info = first.info
    }

    public var droppedFrames: Int { droppedBefore + (camera?.droppedFrames ?? 0) }

    /// The camera being read; `nil` while waiting for it to come back.
    public var current: V4L2Camera? { camera }

    public func nextFrame() throws(FrameSourceError) -> Frame? {
        while true {
            if camera == nil { try reconnect() }
            guard let current = camera else { return nil }
            do {
                guard var frame = try current.nextFrame() else { return nil }
                frame.index = delivered
                delivered += 1
                return frame
            } catch {
                guard case .camera(let problem) = error, Self.isTransient(problem) else { throw error }
                onEvent(.lost(problem))
                droppedBefore += current.droppedFrames
                current.stop()
                camera = nil
            }
        }
    }

    private func reconnect() throws(FrameSourceError) {
        let lostAt = clock()
        var lastProblem = CameraError.disconnected(path: info.name, framesRead: delivered)
        while giveUpAfter.map({ clock() - lostAt < $0 }) ?? true {
            do {
                camera = try open(clockOrigin)
                onEvent(.reconnected(path: info.name, seconds: clock() - lostAt))
                return
            } catch {
                guard Self.isTransient(error) else { throw .camera(error) }
                lastProblem = error
            }
            sleep(retryInterval)
        }
        throw .camera(lastProblem)
    }

    /// Whether waiting can fix it: the camera is away, busy, or silent.
    public static func isTransient(_ problem: CameraError) -> Bool {
        switch problem {
        case .notFound, .disconnected, .noFrames, .busy: true
        case .failed(_, let error): error.kind == .disconnected || error.kind == .other
        case .permissionDenied, .notACaptureDevice, .noUsableFormat, .conversion: false
        }
    }

    public func stop() { camera?.stop() }
}

/// Finds cameras: V4L2 nodes /dev/video0...63 that open (tried by opening, not by listing /dev,
/// so emulated nodes are found too).
public enum CameraDiscovery {
    public static let candidatePaths = (0..<64).map { "/dev/video\($0)" }

    /// Descriptions of the nodes among `paths` that open and answer QUERYCAP.
    public static func describe(paths: [String] = candidatePaths) -> [Result<CameraDescription, CameraError>] {
        paths.compactMap { path in
            let device: V4L2DeviceFile
            do throws(V4L2Error) { device = try V4L2DeviceFile(path: path) } catch {
                if error.code == ENOENT || error.code == ENODEV || error.code == ENXIO { return nil }
                return .failure(CameraError.from(error, path: path))
            }
            do throws(V4L2Error) { return .success(try CameraQuery.describe(device)) } catch {
                return .failure(CameraError.from(error, path: path))
            }
        }
    }

    /// Whether `path` names a V4L2 device node rather than a file.
    public static func isDevicePath(_ path: String) -> Bool {
        path.hasPrefix("/dev/video") || path.hasPrefix("/dev/v4l/")
    }
}
