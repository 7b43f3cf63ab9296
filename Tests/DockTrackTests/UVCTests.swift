import CV4L2
import DockTrack
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fake UVC pan/tilt camera behind the V4L2 ioctl seam: it answers QUERYCTRL with ranges
/// like a Logitech PTZ's (pan ±36000 arc-seconds, tilt ±21600... as configured), keeps control
/// values, records every S_CTRL, and can be unplugged (ENODEV).
final class FakeUVCDevice: V4L2Device {
    var ranges: [UInt32: (Int32, Int32)]
    var values: [UInt32: Int32] = [:]
    var setCalls: [(id: UInt32, value: Int32)] = []
    var unplugged = false

    init(ranges: [UVCControl: (Int32, Int32)]) {
        self.ranges = Dictionary(uniqueKeysWithValues: ranges.map { ($0.key.rawValue, $0.value) })
    }

    func ioctl(_ request: UInt, _ arg: UnsafeMutableRawPointer) -> Int32 {
        if unplugged { return ENODEV }
        switch request {
        case UInt(CV4L2_VIDIOC_QUERYCTRL):
            let query = arg.assumingMemoryBound(to: v4l2_queryctrl.self)
            guard let (low, high) = ranges[query.pointee.id] else { return EINVAL }
            query.pointee.minimum = low
            query.pointee.maximum = high
            query.pointee.step = 1
            return 0
        case UInt(CV4L2_VIDIOC_S_CTRL):
            let control = arg.assumingMemoryBound(to: v4l2_control.self).pointee
            guard let (low, high) = ranges[control.id] else { return EINVAL }
            guard control.value >= low && control.value <= high else { return ERANGE }
            values[control.id] = control.value
            setCalls.append((control.id, control.value))
            return 0
        case UInt(CV4L2_VIDIOC_G_CTRL):
            let control = arg.assumingMemoryBound(to: v4l2_control.self)
            guard ranges[control.pointee.id] != nil else { return EINVAL }
            control.pointee.value = values[control.pointee.id] ?? 0
            return 0
        default:
            return ENOTTY
        }
    }
}

@Suite struct UVCTests {
    func camera() -> FakeUVCDevice {
        FakeUVCDevice(ranges: [.panAbsolute: (-36000, 36000), .tiltAbsolute: (-21600, 21600), .panSpeed: (-10, 10),
                               .tiltSpeed: (-10, 10), .zoomAbsolute: (100, 500)])
    }

    @Test func orientationBecomesArcSecondsClampedToTheCamerasRange() throws {
        let device = camera()
        let dock = try UVCDock(device: device)
        #expect(dock.controls[.panAbsolute] == -36000...36000)
        // 5 degrees right, 2 degrees down: pan 18000", tilt -7200" (V4L2 tilt is positive up).
        try dock.apply(.setOrientation(DockOrientation(x: 2 * .pi / 180, y: 5 * .pi / 180, z: 0), duration: 1, relative: false), at: 0)
        #expect(device.setCalls.map(\.id) == [UVCControl.panAbsolute.rawValue, UVCControl.tiltAbsolute.rawValue])
        #expect(device.setCalls.map(\.value) == [18000, -7200])
        let back = try #require(try dock.orientation())
        #expect(abs(back.y - 5 * .pi / 180) < 1e-9 && abs(back.x - 2 * .pi / 180) < 1e-9)
        // 30 degrees right is past the camera's 10: clamped.
        try dock.apply(.setOrientation(DockOrientation(x: 0, y: 30 * .pi / 180, z: 0), duration: 1, relative: false), at: 0.6)
        #expect(device.values[UVCControl.panAbsolute.rawValue] == 36000)
        #expect(throws: DockError.rateTooHigh(limit: 2)) {
            try dock.apply(.setOrientation(.zero, duration: 1, relative: true), at: 0.7)
        }
        try dock.setZoom(900)
        #expect(device.values[UVCControl.zoomAbsolute.rawValue] == 500)
    }

    @Test func velocityBecomesSpeedSteps() throws {
        let device = camera()
        let dock = try UVCDock(device: device)
        try dock.apply(.setAngularVelocity(AngularVelocity(x: 0.25, y: -0.5, z: 0)), at: 0)
        #expect(device.values[UVCControl.panSpeed.rawValue] == -5)
        #expect(device.values[UVCControl.tiltSpeed.rawValue] == -3, "tilting down is a negative V4L2 tilt speed")
        try dock.apply(.setAngularVelocity(.zero), at: 0.1)
        #expect(device.values[UVCControl.panSpeed.rawValue] == 0)
    }

    @Test func unpluggingAndMissingControlsAreErrorsACallerCanActOn() throws {
        let device = camera()
        let dock = try UVCDock(device: device)
        device.unplugged = true
        #expect(throws: DockError.invalidated) { try dock.apply(.setAngularVelocity(.zero), at: 0) }
        #expect(throws: DockError.notCapable("the camera has no pan or tilt control")) {
            _ = try UVCDock(device: FakeUVCDevice(ranges: [.zoomAbsolute: (100, 500)]))
        }
        #expect(throws: DockError.notConnected) { _ = try UVCDock(path: "/dev/video-none") }
    }
}
