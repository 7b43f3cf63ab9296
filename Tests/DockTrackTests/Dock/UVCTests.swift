import CV4L2
import DockTrack
import DockTrackTestKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite(.onTestThreads) struct UVCTests {
    /// A fake UVC pan/tilt camera with ranges like a Logitech PTZ's.
    func camera() -> FakeCameraDevice {
        FakeCameraDevice.ptz(controls: [.panAbsolute: -36000...36000, .tiltAbsolute: -21600...21600, .panSpeed: -10...10,
                                        .tiltSpeed: -10...10, .zoomAbsolute: 100...500])
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
        #expect(device.controlValues[UVCControl.panAbsolute.rawValue] == 36000)
        #expect(throws: DockError.rateTooHigh(limit: 2)) {
            try dock.apply(.setOrientation(.zero, duration: 1, relative: true), at: 0.7)
        }
        try dock.setZoom(900)
        #expect(device.controlValues[UVCControl.zoomAbsolute.rawValue] == 500)
    }

    @Test func velocityBecomesSpeedSteps() throws {
        let device = camera()
        let dock = try UVCDock(device: device)
        try dock.apply(.setAngularVelocity(AngularVelocity(x: 0.25, y: -0.5, z: 0)), at: 0)
        #expect(device.controlValues[UVCControl.panSpeed.rawValue] == -5)
        #expect(device.controlValues[UVCControl.tiltSpeed.rawValue] == -3, "tilting down is a negative V4L2 tilt speed")
        try dock.apply(.setAngularVelocity(.zero), at: 0.1)
        #expect(device.controlValues[UVCControl.panSpeed.rawValue] == 0)
    }

    @Test func unpluggingAndMissingControlsAreErrorsACallerCanActOn() throws {
        let device = camera()
        let dock = try UVCDock(device: device)
        device.unplugged = true
        #expect(throws: DockError.invalidated) { try dock.apply(.setAngularVelocity(.zero), at: 0) }
        #expect(throws: DockError.notCapable("the camera has no pan or tilt control")) {
            _ = try UVCDock(device: FakeCameraDevice.ptz(controls: [.zoomAbsolute: 100...500]))
        }
        #expect(throws: DockError.notConnected) { _ = try UVCDock(path: "/dev/video-none") }
    }
}
