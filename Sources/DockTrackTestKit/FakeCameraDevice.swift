import CV4L2
import DockTrackCore
import DockTrackMedia
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A fake V4L2 capture device behind the same seam as the real node: it answers the ioctls a
/// capture client makes (QUERYCAP, ENUM_FMT/FRAMESIZES/FRAMEINTERVALS, G/S_FMT, G/S_PARM,
/// REQBUFS, QUERYBUF, QBUF, DQBUF, STREAMON/OFF, and pan/tilt controls), hands out buffer memory
/// of its own for "mmap", and fills queued buffers with the bytes `frame` makes when told that
/// the sensor captured (``capture(_:)``), like a driver: a frame captured with no buffer queued
/// is lost. It records every request by name, can be unplugged (ENODEV), can fail a request
/// with an errno, and can interrupt every call a number of times first (EINTR).
///
/// Sendable by the tests' word, unchecked: one thread uses it at a time (the capture's or the
/// dock's, then the test's once that has stopped), as a driver's node would be.
public final class FakeCameraDevice: V4L2Device, @unchecked Sendable {
    public let name: String
    public let fileDescriptor: Int32 = -1
    public var card = "Fake Camera"
    public var capabilities = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING)
    public var formats: [(FourCC, [ImageSize])]
    public var controls: [UVCControl: ClosedRange<Int32>] = [:]
    public var controlValues: [UInt32: Int32] = [:]
    /// Every S_CTRL that was accepted, in order.
    public private(set) var setCalls: [(id: UInt32, value: Int32)] = []
    /// The bytes of the sensor's frame number n, in the format that is set.
    public var frame: (_ sequence: UInt32, _ format: FourCC, _ size: ImageSize) -> [UInt8]
    /// A frame is captured whenever the client waits and none is ready.
    public var capturesWhenWaitedFor = true
    /// Stamp buffers with this monotonic time (seconds) and the MONOTONIC flag; `nil`: no stamp.
    public var timestamp: (() -> Double)?

    public var unplugged = false
    /// The buffers are gone without a word, as PipeWire's V4L2 emulation does when its source
    /// goes away: QUERYBUF says EINVAL, waiting times out, nothing fails loudly.
    public var buffersDropped = false
    public var failures: [V4L2Request: Int32] = [:]
    public var interruptionsPerCall = 0
    public private(set) var requests: [V4L2Request] = []
    public private(set) var interruptionsGiven = 0

    public private(set) var format: (code: FourCC, size: ImageSize)?
    public private(set) var streaming = false
    private var memory: [UnsafeMutableRawPointer] = []
    private var bufferLength = 0
    private var queued: [Int] = []
    private var filled: [(index: Int, bytes: Int, sequence: UInt32, stamp: Double?)] = []
    public private(set) var sequence: UInt32 = 0
    public private(set) var mapped = 0

    public init(name: String = "/dev/fake0", formats: [(FourCC, [ImageSize])],
         frame: @escaping (_ sequence: UInt32, _ format: FourCC, _ size: ImageSize) -> [UInt8]) {
        self.name = name
        self.formats = formats
        self.frame = frame
    }

    deinit { memory.forEach { $0.deallocate() } }

    /// A 640x480 YUYV camera of flat gray frames with these pan/tilt/zoom controls.
    public static func ptz(controls: [UVCControl: ClosedRange<Int32>]) -> FakeCameraDevice {
        let device = FakeCameraDevice(formats: [(.yuyv, [ImageSize(width: 640, height: 480)])]) { _, _, size in
            CameraBytes.flatYUYV(size, luma: 128)
        }
        device.controls = controls
        return device
    }

    public var queuedCount: Int { queued.count }

    /// The sensor captures `count` frames into queued buffers (lost when none is queued).
    public func capture(_ count: Int = 1) {
        guard streaming, let format else { return }
        for _ in 0..<count {
            let bytes = frame(sequence, format.code, format.size)
            if !queued.isEmpty {
                let index = queued.removeFirst()
                let n = min(bytes.count, bufferLength)
                bytes.withUnsafeBytes { memory[index].copyMemory(from: $0.baseAddress!, byteCount: n) }
                filled.append((index, n, sequence, timestamp?()))
            }
            sequence += 1
        }
    }

    public func ioctl(_ number: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        guard let request = V4L2Request(number: number) else { return ENOTTY }
        if interruptionsGiven < interruptionsPerCall {
            interruptionsGiven += 1
            return EINTR
        }
        interruptionsGiven = 0
        requests.append(request)
        if unplugged { return ENODEV }
        if let code = failures[request] { return code }
        switch request {
        case .queryCapabilities:
            let cap = arg.assumingMemoryBound(to: v4l2_capability.self)
            cap.pointee = v4l2_capability()
            write("fake", into: &cap.pointee.driver)
            write(card, into: &cap.pointee.card)
            write("fake:0", into: &cap.pointee.bus_info)
            cap.pointee.capabilities = capabilities | UInt32(V4L2_CAP_DEVICE_CAPS)
            cap.pointee.device_caps = capabilities
        case .enumerateFormats:
            let description = arg.assumingMemoryBound(to: v4l2_fmtdesc.self)
            let index = Int(description.pointee.index)
            guard description.pointee.type == V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue, index < formats.count else { return EINVAL }
            description.pointee.pixelformat = formats[index].0.rawValue
            description.pointee.flags = formats[index].0 == .mjpeg ? UInt32(V4L2_FMT_FLAG_COMPRESSED) : 0
            write("\(formats[index].0) frames", into: &description.pointee.description)
        case .enumerateFrameSizes:
            let size = arg.assumingMemoryBound(to: v4l2_frmsizeenum.self)
            guard let sizes = formats.first(where: { $0.0.rawValue == size.pointee.pixel_format })?.1,
                  Int(size.pointee.index) < sizes.count else { return EINVAL }
            size.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
            size.pointee.discrete = v4l2_frmsize_discrete(width: UInt32(sizes[Int(size.pointee.index)].width),
                                                          height: UInt32(sizes[Int(size.pointee.index)].height))
        case .enumerateFrameIntervals:
            let interval = arg.assumingMemoryBound(to: v4l2_frmivalenum.self)
            guard interval.pointee.index < 2 else { return EINVAL }
            interval.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
            interval.pointee.discrete = v4l2_fract(numerator: 1, denominator: interval.pointee.index == 0 ? 30 : 15)
        case .setFormat, .getFormat:
            let f = arg.assumingMemoryBound(to: v4l2_format.self)
            if request == .setFormat {
                guard !streaming else { return EBUSY }
                let code = FourCC(rawValue: f.pointee.fmt.pix.pixelformat)
                let entry = formats.first { $0.0 == code } ?? formats[0]
                let wanted = ImageSize(width: Int(f.pointee.fmt.pix.width), height: Int(f.pointee.fmt.pix.height))
                format = (entry.0, entry.1.contains(wanted) ? wanted : entry.1[0])
            }
            guard let format else { return EINVAL }
            f.pointee.fmt.pix.pixelformat = format.code.rawValue
            f.pointee.fmt.pix.width = UInt32(format.size.width)
            f.pointee.fmt.pix.height = UInt32(format.size.height)
            f.pointee.fmt.pix.field = V4L2_FIELD_NONE.rawValue
            f.pointee.fmt.pix.bytesperline = format.code == .yuyv ? UInt32(format.size.width * 2) : 0
            f.pointee.fmt.pix.sizeimage = UInt32(format.size.width * format.size.height * 2)
        case .getStreamParameters, .setStreamParameters:
            let p = arg.assumingMemoryBound(to: v4l2_streamparm.self)
            p.pointee.parm.capture.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
            p.pointee.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: 30)
        case .requestBuffers:
            let r = arg.assumingMemoryBound(to: v4l2_requestbuffers.self)
            guard r.pointee.memory == V4L2_MEMORY_MMAP.rawValue else { return EINVAL }
            if r.pointee.count == 0 {
                memory.forEach { $0.deallocate() }
                memory = []
                queued = []
                filled = []
                return 0
            }
            guard let format, mapped == 0 else { return EBUSY }
            bufferLength = max(format.size.width * format.size.height * 2, 1 << 20)
            r.pointee.count = min(r.pointee.count, 8)
            memory = (0..<Int(r.pointee.count)).map { _ in .allocate(byteCount: bufferLength, alignment: 16) }
        case .queryBuffer:
            let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
            guard Int(b.pointee.index) < memory.count, !buffersDropped else { return EINVAL }
            b.pointee.length = UInt32(bufferLength)
            b.pointee.m.offset = b.pointee.index * 0x10000
        case .queueBuffer:
            let index = Int(arg.assumingMemoryBound(to: v4l2_buffer.self).pointee.index)
            guard index < memory.count, !queued.contains(index), !filled.contains(where: { $0.index == index }) else { return EINVAL }
            queued.append(index)
        case .dequeueBuffer:
            guard streaming else { return EINVAL }
            guard !filled.isEmpty else { return EAGAIN }
            let next = filled.removeFirst()
            let b = arg.assumingMemoryBound(to: v4l2_buffer.self)
            b.pointee.index = UInt32(next.index)
            b.pointee.bytesused = UInt32(next.bytes)
            b.pointee.sequence = next.sequence
            if let stamp = next.stamp {
                b.pointee.flags = UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
                b.pointee.timestamp = timeval(tv_sec: Int(stamp), tv_usec: Int((stamp - stamp.rounded(.down)) * 1e6))
            }
        case .streamOn:
            streaming = true
        case .streamOff:
            streaming = false
            queued = []
            filled = []
        case .queryControl:
            let q = arg.assumingMemoryBound(to: v4l2_queryctrl.self)
            guard let control = UVCControl(rawValue: q.pointee.id), let range = controls[control] else { return EINVAL }
            q.pointee.minimum = range.lowerBound
            q.pointee.maximum = range.upperBound
            q.pointee.step = 1
        case .getControl, .setControl:
            let c = arg.assumingMemoryBound(to: v4l2_control.self)
            guard let control = UVCControl(rawValue: c.pointee.id), let range = controls[control] else { return EINVAL }
            if request == .setControl {
                guard range.contains(c.pointee.value) else { return ERANGE }
                controlValues[c.pointee.id] = c.pointee.value
                setCalls.append((c.pointee.id, c.pointee.value))
            } else {
                c.pointee.value = controlValues[c.pointee.id] ?? 0
            }
        }
        return 0
    }

    public func map(length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, V4L2Error> {
        let index = offset / 0x10000
        guard index < memory.count, length <= bufferLength else { return .failure(V4L2Error(call: "mmap", code: EINVAL)) }
        mapped += 1
        return .success(memory[index])
    }

    public func unmap(_ address: UnsafeMutableRawPointer, length: Int) { mapped -= 1 }

    public func waitReadable(timeout: Double) -> V4L2Readiness {
        if unplugged { return .failed(ENODEV) }
        if buffersDropped { return .timedOut }
        if filled.isEmpty && capturesWhenWaitedFor { capture() }
        return filled.isEmpty ? .timedOut : .readable
    }

    private func write<T>(_ text: String, into field: inout T) {
        withUnsafeMutableBytes(of: &field) { bytes in
            let utf8 = Array(text.utf8.prefix(bytes.count - 1))
            bytes.copyBytes(from: utf8 + [0])
        }
    }
}

/// Camera bytes made from real pictures.
public enum CameraBytes {
    /// `image` (BGR) as packed YUYV 4:2:2 (BT.601, limited range), as a webcam sends it.
    public static func yuyv(_ image: Image) -> [UInt8] {
        let width = image.width, height = image.height
        var out = [UInt8](repeating: 0, count: width * height * 2)
        func yuv(_ p: [UInt8]) -> (Double, Double, Double) {
            let b = Double(p[0]), g = Double(p[1]), r = Double(p[2])
            let y = 16 + 0.257 * r + 0.504 * g + 0.098 * b
            let u = 128 - 0.148 * r - 0.291 * g + 0.439 * b
            let v = 128 + 0.439 * r - 0.368 * g - 0.071 * b
            return (y, u, v)
        }
        func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
        for y in 0..<height {
            for x in stride(from: 0, to: width - 1, by: 2) {
                let (y0, u0, v0) = yuv(image.pixel(x: x, y: y))
                let (y1, u1, v1) = yuv(image.pixel(x: x + 1, y: y))
                let o = (y * width + x) * 2
                out[o] = clamp(y0)
                out[o + 1] = clamp((u0 + u1) / 2)
                out[o + 2] = clamp(y1)
                out[o + 3] = clamp((v0 + v1) / 2)
            }
        }
        return out
    }

    /// A flat gray YUYV frame of brightness `luma` (to tell frames apart).
    public static func flatYUYV(_ size: ImageSize, luma: UInt8) -> [UInt8] {
        var out = [UInt8](repeating: 128, count: size.width * size.height * 2)
        for i in stride(from: 0, to: out.count, by: 2) { out[i] = luma }
        return out
    }
}
