import CV4L2
import DockTrack
import DockTrackTestKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The V4L2 camera source against a fake device behind the ioctl seam: the ioctl sequence, format
/// conversion of real pictures, newest frame wins, timestamps, and every error path.
@Suite(.onTestThreads) struct CameraTests {
    static let messi = ImageSize(width: 548, height: 342)

    /// A camera offering YUYV (messi5.jpg converted as a webcam would send it) and MJPEG (the
    /// JPEG file's own bytes, as an MJPEG webcam sends JPEG frames).
    static func messiCamera() throws -> FakeCameraDevice {
        let image = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let yuyv = CameraBytes.yuyv(image)
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.sample("messi5.jpg"))))
        return FakeCameraDevice(formats: [(.yuyv, [ImageSize(width: 320, height: 240), messi]), (.mjpeg, [messi])]) { _, format, _ in
            format == .mjpeg ? jpeg : yuyv
        }
    }

    @Test func yuyvFramesArriveAsImagesWithTheFaceWhereItIs() throws {
        let device = try Self.messiCamera()
        let camera = try V4L2Camera(device: device, settings: CameraSettings(size: Self.messi))
        #expect(camera.pixelFormat == .yuyv, "YUYV is preferred")
        #expect(camera.info.size == Self.messi && camera.info.kind == .camera && camera.info.framesPerSecond == 30)
        // The sequence a capture client makes, in order.
        let requests = device.requests
        func first(_ request: V4L2Request) -> Int { requests.firstIndex(of: request) ?? .max }
        #expect(first(.queryCapabilities) == 0)
        #expect(first(.enumerateFormats) < first(.enumerateFrameSizes) && first(.enumerateFrameSizes) < first(.setFormat))
        #expect(first(.setFormat) < first(.setStreamParameters) && first(.setStreamParameters) < first(.requestBuffers))
        #expect(first(.requestBuffers) < first(.queryBuffer) && first(.queryBuffer) < first(.queueBuffer))
        #expect(requests.filter { $0 == .queryBuffer }.count == 4 && requests.filter { $0 == .queueBuffer }.count == 4)
        #expect(requests.last == .streamOn && device.streaming && device.queuedCount == 4 && device.mapped == 4)
        // libv4lconvert's own questions reached the same device (not the kernel behind its back).
        #expect(requests[first(.setFormat)...].contains(.queryCapabilities))

        let frame = try #require(try camera.nextFrame())
        #expect(frame.size == Self.messi && frame.index == 0)
        let faces = try DetectorCatalog.make("dnn-face", models: Fixtures.models).detect(in: frame.image, minimumConfidence: 0.5)
        #expect(faces.contains { PixelPoint(x: 242, y: 112).isInside($0.rect, of: frame.size) }, "\(faces)")
        // The conversion is faithful: close to the decoded JPEG, pixel for pixel.
        let original = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        var difference = 0.0
        for (x, y) in [(242, 112), (100, 300), (500, 50), (300, 200)] {
            difference += zip(frame.image.pixel(x: x, y: y), original.pixel(x: x, y: y)).map { abs(Double($0) - Double($1)) }.reduce(0, +)
        }
        #expect(difference / 12 < 12, "mean difference per channel \(difference / 12)")

        camera.stop()
        #expect(!device.streaming && device.mapped == 0)
        // STREAMOFF, a QUERYBUF per buffer (unmapped only if the driver still has it), REQBUFS 0.
        let teardown = Array(device.requests.suffix(from: try #require(device.requests.lastIndex(of: .streamOff))))
        #expect(teardown.first == .streamOff && teardown.last == .requestBuffers)
        #expect(teardown.dropFirst().dropLast().allSatisfy { $0 == .queryBuffer } && teardown.count > 2)
        #expect(try camera.nextFrame() == nil, "a stopped camera has ended")
    }

    @Test func buffersDroppedWithoutAWordAreALossNoticedAtOnceAndNotUnmapped() throws {
        // PipeWire's emulation drops its buffers when the source goes away and wakes nobody;
        // its munmap then reads freed memory (a crash when the camera came back just before
        // the frame timeout). The camera notices within a check interval and leaves them mapped.
        let device = try Self.messiCamera()
        var settings = CameraSettings()
        settings.frameTimeout = 60
        let camera = try V4L2Camera(device: device, settings: settings)
        #expect(try camera.nextFrame() != nil)
        let mapped = device.mapped
        device.buffersDropped = true
        #expect(throws: FrameSourceError.camera(.disconnected(path: "/dev/fake0", framesRead: 1))) { _ = try camera.nextFrame() }
        camera.stop()
        #expect(device.mapped == mapped, "buffers the driver dropped are not unmapped")
        #expect(!device.streaming)
    }

    @Test func aBufferUnmappedUnderTheReaderIsAFailedCopyNotACrash() throws {
        // What PipeWire's emulation does to a dequeued buffer when its source goes away.
        let length = Int(getpagesize()) * 4
        let page = try #require(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        try #require(page != MAP_FAILED)
        memset(page, 7, length)
        var copy = [UInt8](repeating: 0, count: length)
        #expect(copy.withUnsafeMutableBytes { cv4l2_copy_mapped($0.baseAddress, page, length) } == length)
        #expect(copy.allSatisfy { $0 == 7 })
        munmap(page, length)
        #expect(copy.withUnsafeMutableBytes { cv4l2_copy_mapped($0.baseAddress, page, length) } == -1)
    }

    @Test func mjpegFramesAreDecoded() throws {
        let device = try Self.messiCamera()
        let camera = try V4L2Camera(device: device, settings: CameraSettings(pixelFormat: .mjpeg))
        #expect(camera.pixelFormat == .mjpeg && camera.info.size == Self.messi)
        let frame = try #require(try camera.nextFrame())
        let original = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        #expect(frame.image.pixel(x: 242, y: 112) == original.pixel(x: 242, y: 112))
        #expect(frame.image.pixel(x: 20, y: 330) == original.pixel(x: 20, y: 330))
    }

    @Test func theDefaultSizeIsTheLargestUpTo720p() throws {
        let device = FakeCameraDevice(formats: [(.yuyv, [ImageSize(width: 640, height: 480), ImageSize(width: 1280, height: 720),
                                                         ImageSize(width: 1920, height: 1080)])]) { _, _, size in
            CameraBytes.flatYUYV(size, luma: 100)
        }
        let camera = try V4L2Camera(device: device)
        #expect(camera.info.size == ImageSize(width: 1280, height: 720))
        let asked = try V4L2Camera(device: FakeCameraDevice(formats: device.formats, frame: device.frame),
                                   settings: CameraSettings(size: ImageSize(width: 600, height: 450)))
        #expect(asked.info.size == ImageSize(width: 640, height: 480), "the nearest offered size")
    }

    @Test func theNewestFrameWinsAndOlderBuffersGoStraightBack() throws {
        let size = ImageSize(width: 64, height: 48)
        let device = FakeCameraDevice(formats: [(.yuyv, [size])]) { sequence, _, size in
            CameraBytes.flatYUYV(size, luma: UInt8(20 + 30 * (sequence % 7)))
        }
        device.capturesWhenWaitedFor = false
        let camera = try V4L2Camera(device: device)
        device.capture(3)  // the consumer was slow: three frames are waiting
        let frame = try #require(try camera.nextFrame())
        let luma = Int(frame.image.pixel(x: 10, y: 10)[1])
        #expect(abs(luma - 80) < 16, "the third frame (luma 80), not the first (20): green \(luma)")
        #expect(camera.droppedFrames == 2)
        #expect(device.queuedCount == 4, "every buffer is back with the driver")
        // Six captures with four buffers: the last two find no buffer and are lost by the driver;
        // of the four filled, the newest wins.
        device.capture(6)
        _ = try #require(try camera.nextFrame())
        #expect(camera.droppedFrames == 2 + 3, "3 passed over: \(camera.droppedFrames)")
        #expect(device.queuedCount == 4)
        // The driver's loss shows as a gap in the sequence numbers on the next frame.
        device.capture(1)
        _ = try #require(try camera.nextFrame())
        #expect(camera.droppedFrames == 2 + 3 + 2, "2 lost by the driver: \(camera.droppedFrames)")
    }

    @Test func frameTimesAreTheMonotonicCaptureStampsFromTheClockOrigin() throws {
        let device = FakeCameraDevice(formats: [(.yuyv, [ImageSize(width: 32, height: 24)])]) { _, _, size in
            CameraBytes.flatYUYV(size, luma: 60)
        }
        nonisolated(unsafe) var now = 1000.0
        device.timestamp = { now - 0.030 }  // captured 30 ms before it is dequeued
        let camera = try V4L2Camera(device: device, clockOrigin: 990, clock: { now })
        let first = try #require(try camera.nextFrame())
        #expect(abs(first.time - 9.970) < 1e-6, "\(first.time)")
        now = 1000.5
        let second = try #require(try camera.nextFrame())
        #expect(abs(second.time - 10.470) < 1e-6 && second.index == 1)
        // A stamp that is not plausible (no stamp at all here) falls back to the dequeue time.
        device.timestamp = nil
        now = 1001
        #expect(abs(try #require(try camera.nextFrame()).time - 11) < 1e-6)
    }

    @Test func interruptedCallsAreRetried() throws {
        let device = try Self.messiCamera()
        device.interruptionsPerCall = 3
        let camera = try V4L2Camera(device: device)
        #expect(try camera.nextFrame() != nil)
        var capability = v4l2_capability()
        try device.perform(.queryCapabilities, &capability)
    }

    @Test func errorsSayWhatIsWrong() throws {
        let busy = try Self.messiCamera()
        busy.failures[.setFormat] = EBUSY
        #expect(throws: CameraError.busy(path: "/dev/fake0")) { _ = try V4L2Camera(device: busy) }
        #expect(CameraError.busy(path: "/dev/fake0").description.contains("another program"))

        let output = try Self.messiCamera()
        output.capabilities = UInt32(V4L2_CAP_VIDEO_OUTPUT | V4L2_CAP_STREAMING)
        output.card = "Fake Encoder"
        #expect(throws: CameraError.notACaptureDevice(path: "/dev/fake0", card: "Fake Encoder")) { _ = try V4L2Camera(device: output) }

        let noGrey = try Self.messiCamera()
        #expect(throws: CameraError.noUsableFormat(path: "/dev/fake0", offered: ["YUYV", "MJPG"])) {
            _ = try V4L2Camera(device: noGrey, settings: CameraSettings(pixelFormat: .grey))
        }

        let corrupt = FakeCameraDevice(formats: [(.mjpeg, [ImageSize(width: 64, height: 48)])]) { _, _, _ in
            [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 100)
        }
        let camera = try V4L2Camera(device: corrupt)
        #expect { _ = try camera.nextFrame() } throws: { error in
            guard case FrameSourceError.camera(.conversion(let path, _)) = error else { return false }
            return path == "/dev/fake0"
        }

        #expect(throws: CameraError.notFound(path: "/dev/video-none")) { _ = try V4L2Camera(path: "/dev/video-none") }
        let notADevice = try Fixtures.temporaryFolder().appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: notADevice)
        #expect { _ = try V4L2Camera(path: notADevice.path) } throws: { error in
            guard case CameraError.failed(_, let v4l2) = error else { return false }
            return v4l2.call == "VIDIOC_QUERYCAP" && v4l2.kind == .unsupported
        }
    }

    @Test func anUnpluggedCameraEndsTheStreamWithDisconnected() throws {
        let device = try Self.messiCamera()
        let camera = try V4L2Camera(device: device, settings: CameraSettings(size: ImageSize(width: 320, height: 240)))
        for _ in 0..<3 { _ = try camera.nextFrame() }
        device.unplugged = true
        #expect(throws: FrameSourceError.camera(.disconnected(path: "/dev/fake0", framesRead: 3))) { _ = try camera.nextFrame() }
        #expect(FrameSourceError.camera(.disconnected(path: "/dev/fake0", framesRead: 3)).description
                == "/dev/fake0: the camera was disconnected after 3 frames")
        // A camera that falls silent: no frame within the timeout.
        let silent = try Self.messiCamera()
        silent.capturesWhenWaitedFor = false
        var settings = CameraSettings()
        settings.frameTimeout = 0.01
        #expect(throws: FrameSourceError.camera(.noFrames(path: "/dev/fake0", seconds: 0.01, framesRead: 0))) {
            _ = try V4L2Camera(device: silent, settings: settings).nextFrame()
        }
    }

    @Test func aReconnectingCameraWaitsForTheCameraAndResumes() throws {
        let size = ImageSize(width: 320, height: 240)
        var devices = [try Self.messiCamera(), try Self.messiCamera()]
        nonisolated(unsafe) var now = 100.0
        var attempts = 0
        var events: [CameraEvent] = []
        var sleeps: [Double] = []
        let camera = try ReconnectingCamera(clock: { now }, retryInterval: 0.5, sleep: { sleeps.append($0); now += $0 },
                                            onEvent: { events.append($0) }) { origin throws(CameraError) in
            attempts += 1
            // Unplugged: the node is gone for two attempts after the first open.
            if attempts == 2 || attempts == 3 { throw .notFound(path: "/dev/fake0") }
            return try V4L2Camera(device: devices.removeFirst(), settings: CameraSettings(size: size), clockOrigin: origin, clock: { now })
        }
        let first = camera.info
        var indices: [Int] = []
        for _ in 0..<4 { indices.append(try #require(try camera.nextFrame()).index) }
        // The first device is unplugged mid-stream; the second appears after two failed attempts.
        let firstDevice = try #require((camera.current as? V4L2Camera)?.device as? FakeCameraDevice)
        firstDevice.unplugged = true
        for _ in 0..<3 { indices.append(try #require(try camera.nextFrame()).index) }
        #expect(indices == Array(0..<7), "indices go on counting")
        #expect(events == [.lost(.disconnected(path: "/dev/fake0", framesRead: 4)), .reconnected(path: "/dev/fake0", seconds: 1.0)])
        #expect(sleeps == [0.5, 0.5] && attempts == 4 && first.size == size)
        #expect(camera.clockOrigin == 100)

        // Errors waiting cannot fix end the stream at once.
        #expect(!ReconnectingCamera.isTransient(.permissionDenied(path: "/dev/fake0")))
        #expect(ReconnectingCamera.isTransient(.noFrames(path: "/dev/fake0", seconds: 5, framesRead: 9)))
        // And a camera that never comes back ends it after giveUpAfter.
        var opens = 0
        let onlyDevice = try Self.messiCamera()
        let gone = try ReconnectingCamera(clock: { now }, giveUpAfter: 2, sleep: { now += $0 }, onEvent: { _ in }) { origin throws(CameraError) in
            opens += 1
            if opens > 1 { throw .notFound(path: "/dev/fake1") }
            return try V4L2Camera(device: onlyDevice, clockOrigin: origin, clock: { now })
        }
        _ = try gone.nextFrame()
        try #require((gone.current as? V4L2Camera)?.device as? FakeCameraDevice).unplugged = true
        #expect(throws: FrameSourceError.camera(.notFound(path: "/dev/fake1"))) { _ = try gone.nextFrame() }
    }

    @Test func theSameDevicesPanTiltControlsDriveAUVCDock() throws {
        let device = try Self.messiCamera()
        device.controls = [.panAbsolute: -36000...36000, .tiltAbsolute: -21600...21600]
        let camera = try V4L2Camera(device: device)
        #expect(camera.description.controls["panAbsolute"] == [-36000, 36000])
        let dock = try UVCDock(device: camera.device)
        try dock.apply(.setOrientation(DockOrientation(x: 0, y: 5 * .pi / 180, z: 0), duration: 1, relative: false), at: 0)
        #expect(device.controlValues[UVCControl.panAbsolute.rawValue] == 18000)
        #expect(try camera.nextFrame() != nil, "streaming goes on while the dock moves")
    }

    @Test func fourCharacterCodes() {
        #expect(FourCC("YUYV")?.rawValue == 0x5659_5559)
        #expect(FourCC.mjpeg.description == "MJPG")
        #expect(FourCC("YUY") == nil && FourCC("YUYV2") == nil)
    }
}
