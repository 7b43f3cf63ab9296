import DockTrackCore
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A live V4L2 camera as a ``FrameSource``: memory-mapped streaming, frames converted to BGR by
/// libv4lconvert straight into the image, stamped with the monotonic capture clock.
///
/// The newest frame wins: each ``nextFrame()`` takes every buffer the driver has filled, keeps the
/// latest, and gives the older ones straight back, so a slow consumer sees fresh frames and never
/// a queue (the frames passed over are counted in ``droppedFrames``).
package final class V4L2Camera: FrameSource {
    package let device: any V4L2Device
    package let description: CameraDescription
    /// The format the camera delivers (as set, after the driver's adjustments).
    package let pixelFormat: FourCC
    package let info: MediaInfo
    /// The monotonic time frame times count from (seconds): ``Frame/time`` is capture time minus this.
    package let clockOrigin: Double
    /// Frames delivered so far.
    package private(set) var framesRead = 0
    /// Frames the camera captured that were passed over for a newer one, or lost by the driver.
    package private(set) var droppedFrames = 0

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
    package convenience init(path: String, settings: CameraSettings = CameraSettings(), clockOrigin: Double? = nil) throws(CameraError) {
        let device: V4L2DeviceFile
        do { device = try V4L2DeviceFile(path: path) } catch { throw CameraError.from(error, path: path) }
        try self.init(device: device, settings: settings, clockOrigin: clockOrigin)
    }

    /// Sets `device` up as `settings` ask and starts streaming. `clock` is the monotonic clock
    /// (injected for tests); `clockOrigin` defaults to now.
    package init(device: any V4L2Device, settings: CameraSettings = CameraSettings(), clockOrigin: Double? = nil,
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
    package func stop() {
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
    package static let lossCheckInterval = 0.5

    package func nextFrame() throws(FrameSourceError) -> Frame? {
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
