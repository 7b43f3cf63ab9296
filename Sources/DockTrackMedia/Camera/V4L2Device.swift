import DockTrackCore
import DockTrackSystem
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A V4L2 device as DockTrack sees it: ioctls, buffer mapping and waiting for a frame. The real
/// node is ``V4L2DeviceFile``; tests put a fake here. Every ioctl goes through
/// ``V4L2Device/perform(_:_:)``, which retries EINTR and turns errno into a ``V4L2Error``.
package protocol V4L2Device: AnyObject {
    /// The device's name for messages (its path).
    var name: String { get }
    /// The file descriptor when there is one (libv4lconvert reads USB ids through it), else -1.
    var fileDescriptor: Int32 { get }
    /// One ioctl(request, arg): 0 or the errno (EINTR included; the caller retries).
    func ioctl(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32
    /// Maps `length` bytes of the device's buffer memory at `offset` (a QUERYBUF offset).
    func map(length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, V4L2Error>
    func unmap(_ address: UnsafeMutableRawPointer, length: Int)
    /// Waits up to `timeout` seconds until a buffer can be dequeued.
    func waitReadable(timeout: Double) -> V4L2Readiness
}

/// What waiting for a frame ended with.
public enum V4L2Readiness: Sendable, Equatable {
    case readable
    case timedOut
    /// The device reported an error condition (unplugged), or poll failed with this errno.
    case failed(Int32)
}

/// The VIDIOC_* requests DockTrack makes, with their names for messages.
public enum V4L2Request: String, Sendable, CaseIterable {
    case queryCapabilities = "VIDIOC_QUERYCAP"
    case enumerateFormats = "VIDIOC_ENUM_FMT"
    case enumerateFrameSizes = "VIDIOC_ENUM_FRAMESIZES"
    case enumerateFrameIntervals = "VIDIOC_ENUM_FRAMEINTERVALS"
    case getFormat = "VIDIOC_G_FMT"
    case setFormat = "VIDIOC_S_FMT"
    case getStreamParameters = "VIDIOC_G_PARM"
    case setStreamParameters = "VIDIOC_S_PARM"
    case requestBuffers = "VIDIOC_REQBUFS"
    case queryBuffer = "VIDIOC_QUERYBUF"
    case queueBuffer = "VIDIOC_QBUF"
    case dequeueBuffer = "VIDIOC_DQBUF"
    case streamOn = "VIDIOC_STREAMON"
    case streamOff = "VIDIOC_STREAMOFF"
    case getControl = "VIDIOC_G_CTRL"
    case setControl = "VIDIOC_S_CTRL"
    case queryControl = "VIDIOC_QUERYCTRL"

    /// The request number the kernel knows.
    public var number: UInt {
        switch self {
        case .queryCapabilities: CV4L2_VIDIOC_QUERYCAP
        case .enumerateFormats: CV4L2_VIDIOC_ENUM_FMT
        case .enumerateFrameSizes: CV4L2_VIDIOC_ENUM_FRAMESIZES
        case .enumerateFrameIntervals: CV4L2_VIDIOC_ENUM_FRAMEINTERVALS
        case .getFormat: CV4L2_VIDIOC_G_FMT
        case .setFormat: CV4L2_VIDIOC_S_FMT
        case .getStreamParameters: CV4L2_VIDIOC_G_PARM
        case .setStreamParameters: CV4L2_VIDIOC_S_PARM
        case .requestBuffers: CV4L2_VIDIOC_REQBUFS
        case .queryBuffer: CV4L2_VIDIOC_QUERYBUF
        case .queueBuffer: CV4L2_VIDIOC_QBUF
        case .dequeueBuffer: CV4L2_VIDIOC_DQBUF
        case .streamOn: CV4L2_VIDIOC_STREAMON
        case .streamOff: CV4L2_VIDIOC_STREAMOFF
        case .getControl: CV4L2_VIDIOC_G_CTRL
        case .setControl: CV4L2_VIDIOC_S_CTRL
        case .queryControl: CV4L2_VIDIOC_QUERYCTRL
        }
    }

    /// The request with this number, if DockTrack makes it.
    public init?(number: UInt) {
        guard let request = Self.allCases.first(where: { $0.number == number }) else { return nil }
        self = request
    }
}

/// A failed V4L2 call: which one and the errno, sorted into what a caller acts on.
public struct V4L2Error: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The device is gone (unplugged): ENODEV, ENXIO.
        case disconnected
        /// Another program holds it: EBUSY.
        case busy
        /// The device does not do this, or not with these values: EINVAL, ENOTTY, ENOSYS.
        case unsupported
        /// Nothing ready yet on a non-blocking device: EAGAIN.
        case wouldBlock
        /// No right to use it: EACCES, EPERM.
        case permissionDenied
        /// Anything else (EIO, ENOMEM, ...).
        case other
    }

    /// The call, e.g. "VIDIOC_S_FMT", "open", "mmap", "poll".
    public var call: String
    public var code: Int32

    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    package init(_ request: V4L2Request, code: Int32) {
        self.init(call: request.rawValue, code: code)
    }

    public var kind: Kind {
        switch code {
        case ENODEV, ENXIO: .disconnected
        case EBUSY: .busy
        case EINVAL, ENOTTY, ENOSYS: .unsupported
        case EAGAIN: .wouldBlock
        case EACCES, EPERM: .permissionDenied
        default: .other
        }
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

extension V4L2Device {
    /// The ioctl `request` on `argument`, retried while interrupted (EINTR); a failure throws the
    /// errno as a ``V4L2Error``. The one way DockTrack talks to a V4L2 device.
    package func perform<Argument>(_ request: V4L2Request, _ argument: inout Argument) throws(V4L2Error) {
        let code = withUnsafeMutableBytes(of: &argument) { retryingIoctl(request.number, $0.baseAddress!) }
        if code != 0 { throw V4L2Error(request, code: code) }
    }

    /// One ioctl retried while it fails with EINTR (up to 1000 times): 0 or the errno. Used by
    /// ``perform(_:_:)`` and by libv4lconvert's callback, which must answer with an errno.
    func retryingIoctl(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        var code = ioctl(request, arg)
        var interruptions = 0
        while code == EINTR && interruptions < 1000 {
            interruptions += 1
            code = ioctl(request, arg)
        }
        return code
    }
}

/// A V4L2 device node, opened read-write and non-blocking through libc (so PipeWire's
/// `pw-v4l2` emulation, which intercepts open/ioctl/mmap, sees every call).
package final class V4L2DeviceFile: V4L2Device {
    package let name: String
    package let fileDescriptor: Int32

    /// Opens `path`. The path is not checked with stat first: an emulated node has no file.
    package init(path: String) throws(V4L2Error) {
        name = path
        fileDescriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fileDescriptor >= 0 else { throw V4L2Error(call: "open", code: errno) }
    }

    deinit { close(fileDescriptor) }

    package func ioctl(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        cv4l2_ioctl(fileDescriptor, request, arg)
    }

    package func map(length: Int, offset: Int) -> Result<UnsafeMutableRawPointer, V4L2Error> {
        let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fileDescriptor, off_t(offset))
        guard let address, address != MAP_FAILED else { return .failure(V4L2Error(call: "mmap", code: errno)) }
        return .success(address)
    }

    package func unmap(_ address: UnsafeMutableRawPointer, length: Int) {
        munmap(address, length)
    }

    package func waitReadable(timeout: Double) -> V4L2Readiness {
        var descriptors = [pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)]
        let ready: Int
        do {
            ready = try Syscall.poll(&descriptors, seconds: timeout)
        } catch {
            return .failed(error.errno)
        }
        if ready == 0 { return .timedOut }
        let events = descriptors[0].revents
        if events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && events & Int16(POLLIN) == 0 { return .failed(ENODEV) }
        return .readable
    }
}
