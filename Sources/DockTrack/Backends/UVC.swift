import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one place V4L2 ioctls go through: the real device, or a fake one in tests.
public protocol V4L2Device: AnyObject {
    /// ioctl(request, arg) with EINTR retried; 0 or the errno.
    func ioctl(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32
}

/// A V4L2 device node opened read-write.
public final class V4L2DeviceFile: V4L2Device {
    public let path: String
    let fd: Int32

    public init(path: String) throws(DockError) {
        self.path = path
        fd = open(path, O_RDWR | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT, ENODEV, ENXIO: throw .notConnected
            case EACCES, EPERM: throw .invalidRequest("\(path): permission denied")
            case EBUSY: throw .invalidRequest("\(path): busy")
            default: throw .invalidRequest("\(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    deinit { close(fd) }

    public func ioctl(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        cv4l2_ioctl(fd, request, arg)
    }
}

/// V4L2 camera-class controls a UVC pan/tilt/zoom camera offers (linux/v4l2-controls.h).
public enum UVCControl: UInt32, Sendable, CaseIterable {
    /// Arc-seconds, positive right.
    case panAbsolute = 0x009A_0908
    /// Arc-seconds, positive up.
    case tiltAbsolute = 0x009A_0909
    case panRelative = 0x009A_0904
    case tiltRelative = 0x009A_0905
    /// Signed speed steps, the sign is the direction.
    case panSpeed = 0x009A_0920
    case tiltSpeed = 0x009A_0921
    case zoomAbsolute = 0x009A_090D
}

/// A UVC pan/tilt camera driven through V4L2 controls, behind the same commands as every dock.
/// Orientation commands set PAN/TILT_ABSOLUTE (arc-seconds, clamped to the range the device
/// reports); velocity commands set PAN/TILT_SPEED when the device has them.
public final class UVCDock {
    public let device: any V4L2Device
    private var ranges: [UVCControl: ClosedRange<Int32>] = [:]
    private var orientationRate = RateLimiter(maximumPerSecond: 2)

    /// Asks the device which pan/tilt/zoom controls it has; fails when it has neither pan nor tilt.
    public init(device: any V4L2Device) throws(DockError) {
        self.device = device
        for control in UVCControl.allCases {
            var query = v4l2_queryctrl()
            query.id = control.rawValue
            let result = device.ioctl(UInt(CV4L2_VIDIOC_QUERYCTRL), &query)
            if result == ENODEV { throw .invalidated }
            if result == 0 && query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 {
                ranges[control] = query.minimum...query.maximum
            }
        }
        guard ranges[.panAbsolute] != nil || ranges[.tiltAbsolute] != nil || ranges[.panSpeed] != nil else {
            throw .notCapable("the camera has no pan or tilt control")
        }
    }

    /// The controls the device has, with their ranges.
    public var controls: [UVCControl: ClosedRange<Int32>] { ranges }

    public func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        switch command {
        case .setOrientation(let o, _, let relative):
            try orientationRate.accept(at: time)
            var target = o
            if relative { target = target + (try orientation() ?? .zero) }
            try set(.panAbsolute, Int32((target.y * 180 / .pi * 3600).rounded()))
            try set(.tiltAbsolute, Int32((-target.x * 180 / .pi * 3600).rounded()))
        case .setAngularVelocity(let v):
            guard v.z == 0 else { throw .notCapable("roll") }
            guard ranges[.panSpeed] != nil || ranges[.tiltSpeed] != nil else { throw .notCapable("speed control") }
            try set(.panSpeed, speedStep(v.y, control: .panSpeed))
            try set(.tiltSpeed, speedStep(-v.x, control: .tiltSpeed))
        case .animate:
            throw .notCapable("animations")
        case .setSystemTracking, .setLimits:
            return
        }
    }

    /// Sets the zoom (the device's own units, clamped to its range).
    public func setZoom(_ value: Int32) throws(DockError) { try set(.zoomAbsolute, value) }

    /// The present pan and tilt from PAN/TILT_ABSOLUTE.
    public func orientation() throws(DockError) -> DockOrientation? {
        let pan = try get(.panAbsolute) ?? 0, tilt = try get(.tiltAbsolute) ?? 0
        return DockOrientation(x: -Double(tilt) / 3600 * .pi / 180, y: Double(pan) / 3600 * .pi / 180, z: 0)
    }

    /// Speed steps: the device's range covers ±1 rad/s linearly, at least one step when moving.
    private func speedStep(_ speed: Double, control: UVCControl) -> Int32 {
        guard let range = ranges[control], speed != 0 else { return 0 }
        let top = Double(max(abs(range.lowerBound), range.upperBound))
        let step = Int32((min(1, abs(speed)) * top).rounded())
        return (speed < 0 ? -1 : 1) * max(1, step)
    }

    private func set(_ control: UVCControl, _ value: Int32) throws(DockError) {
        guard let range = ranges[control] else { return }
        var c = v4l2_control(id: control.rawValue, value: min(max(value, range.lowerBound), range.upperBound))
        try check(device.ioctl(UInt(CV4L2_VIDIOC_S_CTRL), &c))
    }

    private func get(_ control: UVCControl) throws(DockError) -> Int32? {
        guard ranges[control] != nil else { return nil }
        var c = v4l2_control(id: control.rawValue, value: 0)
        try check(device.ioctl(UInt(CV4L2_VIDIOC_G_CTRL), &c))
        return c.value
    }

    private func check(_ errno: Int32) throws(DockError) {
        switch errno {
        case 0: return
        case ENODEV, ENXIO: throw .invalidated
        case EBUSY, EAGAIN: throw .rateTooHigh(limit: 2)
        case EINVAL, ERANGE: throw .invalidRequest("the camera refused the value")
        default: throw .invalidRequest(String(cString: strerror(errno)))
        }
    }
}
