import DockTrackCore
import DockTrackMedia
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif


/// A UVC pan/tilt camera driven through V4L2 controls, behind the same commands as every dock.
/// Orientation commands set PAN/TILT_ABSOLUTE (arc-seconds, clamped to the range the device
/// reports); velocity commands set PAN/TILT_SPEED when the device has them.
package final class UVCDock {
    package let device: any V4L2Device
    private var ranges: [UVCControl: ClosedRange<Int32>] = [:]
    private var orientationRate = RateLimiter(maximumPerSecond: 2)

    /// Opens the V4L2 node at `path` (a UVC camera) as a dock.
    package convenience init(path: String) throws(DockError) {
        let device: V4L2DeviceFile
        do {
            device = try V4L2DeviceFile(path: path)
        } catch {
            switch error.code {
            case ENOENT, ENODEV, ENXIO: throw .notConnected
            case EACCES, EPERM: throw .invalidRequest("\(path): permission denied")
            case EBUSY: throw .invalidRequest("\(path): busy")
            default: throw .invalidRequest("\(path): \(error)")
            }
        }
        try self.init(device: device)
    }

    /// Asks the device which pan/tilt/zoom controls it has; fails when it has neither pan nor tilt.
    package init(device: any V4L2Device) throws(DockError) {
        self.device = device
        for control in UVCControl.allCases {
            var query = v4l2_queryctrl()
            query.id = control.rawValue
            do {
                try device.perform(.queryControl, &query)
            } catch {
                if error.kind == .disconnected { throw .invalidated }
                continue
            }
            if query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 {
                ranges[control] = query.minimum...query.maximum
            }
        }
        guard ranges[.panAbsolute] != nil || ranges[.tiltAbsolute] != nil || ranges[.panSpeed] != nil else {
            throw .notCapable("the camera has no pan or tilt control")
        }
    }

    /// The controls the device has, with their ranges.
    package var controls: [UVCControl: ClosedRange<Int32>] { ranges }

    package func apply(_ command: DockCommand, at time: Double) throws(DockError) {
        switch command {
        case .setOrientation(let o, _, let relative):
            try orientationRate.accept(at: time)
            var target = o
            if relative { target = target + (try orientation() ?? .zero) }
            try set(.panAbsolute, Int32(saturating: target.y * 180 / .pi * 3600))
            try set(.tiltAbsolute, Int32(saturating: -target.x * 180 / .pi * 3600))
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
    package func setZoom(_ value: Int32) throws(DockError) { try set(.zoomAbsolute, value) }

    /// The present pan and tilt from PAN/TILT_ABSOLUTE; `nil` for a camera without them (speed
    /// controls only: it cannot say where it points).
    package func orientation() throws(DockError) -> DockOrientation? {
        guard ranges[.panAbsolute] != nil || ranges[.tiltAbsolute] != nil else { return nil }
        let pan = try get(.panAbsolute) ?? 0, tilt = try get(.tiltAbsolute) ?? 0
        return DockOrientation(x: -Double(tilt) / 3600 * .pi / 180, y: Double(pan) / 3600 * .pi / 180, z: 0)
    }

    /// Speed steps: the device's range covers ±1 rad/s linearly, at least one step when moving.
    private func speedStep(_ speed: Double, control: UVCControl) -> Int32 {
        guard let range = ranges[control], speed != 0, !speed.isNaN else { return 0 }
        let top = max(abs(Double(range.lowerBound)), Double(range.upperBound))
        let step = Int32(saturating: min(1, abs(speed)) * top)
        return (speed < 0 ? -1 : 1) * max(1, step)
    }

    private func set(_ control: UVCControl, _ value: Int32) throws(DockError) {
        guard let range = ranges[control] else { return }
        var c = v4l2_control(id: control.rawValue, value: min(max(value, range.lowerBound), range.upperBound))
        do { try device.perform(.setControl, &c) } catch { throw Self.dockError(error) }
    }

    private func get(_ control: UVCControl) throws(DockError) -> Int32? {
        guard ranges[control] != nil else { return nil }
        var c = v4l2_control(id: control.rawValue, value: 0)
        do { try device.perform(.getControl, &c) } catch { throw Self.dockError(error) }
        return c.value
    }

    /// What a failed control ioctl means to a dock.
    static func dockError(_ error: V4L2Error) -> DockError {
        switch error.kind {
        case .disconnected: .invalidated
        case .busy, .wouldBlock: .rateTooHigh(limit: 2)
        case .unsupported: .invalidRequest("the camera refused the value")
        case .permissionDenied, .other: .invalidRequest(error.description)
        }
    }
}

extension UVCDock: DockHardware {
    /// The axes whose controls the camera reported (absolute or speed).
    package var capabilities: [DockCapability] {
        var out: [DockCapability] = []
        if ranges[.panAbsolute] != nil || ranges[.panSpeed] != nil { out.append(.pan) }
        if ranges[.tiltAbsolute] != nil || ranges[.tiltSpeed] != nil { out.append(.tilt) }
        return out + [.systemTracking]
    }
}
