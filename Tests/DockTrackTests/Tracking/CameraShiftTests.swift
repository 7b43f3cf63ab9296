import DockTrack
import Foundation
import Testing

/// The picture's own motion, measured frame to frame: on a clip whose camera motion is known
/// it is read within a fraction of a percent; on a still camera with people walking it is
/// nearly none; a frame of 1 px, a flat picture and a cut do not trap.
@Suite(.onTestThreads) struct CameraShiftTests {
    /// samples/vtest-panning.mp4's window, as tools/moving-camera/make_clip.py moves it: its
    /// top-left corner in vtest.avi's pixels at `frame` (from 0).
    static func window(_ frame: Int) -> (x: Double, y: Double) {
        let t = Double(frame) / 10
        let x = 408 * (0.5 - 0.5 * cos(2 * .pi * t / 6)) + 25 * sin(2 * .pi * t / 1.5)
        let y = 306 * (0.35 + 0.25 * sin(2 * .pi * t / 17)) + 6 * sin(2 * .pi * t / 1.3)
        return (min(max(x, 0), 408).rounded(), min(max(y, 0), 306).rounded())
    }

    @Test func aPanningCamerasMotionIsReadFrameToFrame() throws {
        var source = try MediaFile.open(Fixtures.sample("vtest-panning.mp4"))
        var estimator = CameraShiftEstimator()
        var errors: [Double] = []
        var index = 0
        while let frame = try source.nextFrame() {
            let shift = try estimator.shift(to: frame.image)
            if index > 0 {
                // The picture moves against the window: right when it pans left; up (unit y)
                // when it tilts down.
                let (x0, y0) = Self.window(index - 1), (x1, y1) = Self.window(index)
                errors.append(hypot(shift.x + (x1 - x0) / 360, shift.y - (y1 - y0) / 270))
            }
            index += 1
        }
        errors.sort()
        #expect(errors.count == 299)
        #expect(errors[errors.count / 2] < 0.003, "median error \(errors[errors.count / 2]) of the picture")
        #expect(errors[errors.count * 9 / 10] < 0.008, "90th percentile \(errors[errors.count * 9 / 10])")
    }

    @Test func aStillCameraWithPeopleWalkingBarelyMoves() throws {
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        var estimator = CameraShiftEstimator()
        var sizes: [Double] = []
        while sizes.count < 100, let frame = try source.nextFrame() {
            let shift = try estimator.shift(to: frame.image)
            sizes.append(hypot(shift.x, shift.y))
        }
        sizes.sort()
        #expect(sizes[50] < 0.002 && sizes[95] < 0.005, "median \(sizes[50]), 95th percentile \(sizes[95])")
    }

    @Test func tinyFlatAndChangingFramesAreNoShift() throws {
        var estimator = CameraShiftEstimator()
        let tiny = try Image(pixels: [90, 90, 90], width: 1, height: 1, channels: 3)
        #expect(try estimator.shift(to: tiny) == .none)
        #expect(try estimator.shift(to: tiny) == .none)
        let flat = try Image(pixels: [UInt8](repeating: 128, count: 640 * 480 * 3), width: 640, height: 480, channels: 3)
        #expect(try estimator.shift(to: flat) == .none)
        let shift = try estimator.shift(to: flat)
        #expect(shift.x.isFinite && shift.y.isFinite && abs(shift.x) <= 0.5 && abs(shift.y) <= 0.5, "\(shift)")
        // A frame of another size (a new stream) starts afresh.
        let other = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        #expect(try estimator.shift(to: other) == .none)
    }
}

/// The correlation is passed over on a still camera and a slow pan still adds up.
@Suite(.onTestThreads) struct StillCameraTests {
    @Test func aStillCameraPassesOverMostCorrelations() throws {
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        var estimator = CameraShiftEstimator()
        var frames = 0
        while frames < 100, let frame = try source.nextFrame() {
            _ = try estimator.shift(to: frame.image)
            frames += 1
        }
        #expect(estimator.stillSoFar >= 50, "passed over \(estimator.stillSoFar) of 99")
    }

    /// A window sliding 1 px a frame over a 1096 px picture (a fifth of a pixel of the working
    /// copy: below what one frame's check sees) moves the picture by 40 px in 40 frames; the
    /// shifts read add up to that within a fifth.
    @Test func aSlowPanAddsUp() throws {
        let photo = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let wide = try photo.resized(to: ImageSize(width: photo.width * 2, height: photo.height * 2))
        var estimator = CameraShiftEstimator()
        var total = 0.0
        for k in 0...40 {
            let window = try wide.cropped(to: PixelRect(x: Double(k), y: 0, width: 800, height: Double(wide.height)),
                                          size: ImageSize(width: 800, height: wide.height))
            total += try estimator.shift(to: window).x
        }
        // The window moves right, so the picture moves left: -40 px of 800.
        #expect(abs(total + 0.05) < 0.01, "total \(total)")
        #expect(estimator.stillSoFar > 0, "some correlations passed over")
    }
}
