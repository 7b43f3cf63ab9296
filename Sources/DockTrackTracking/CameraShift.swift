import DockTrackCore
import DockTrackMedia
import Foundation

/// How far the whole picture moved between two frames, in unit coordinates (lower-left origin,
/// y up): a camera that pans, tilts or shakes (the dock's own, or a hand's) moves everything it
/// sees by about one shift, which a tracker predicting each box in picture coordinates would
/// otherwise take for every subject's own motion, and leave a box beside its person.
public struct PictureShift: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    public static let none = PictureShift(x: 0, y: 0)
}

/// Measures ``PictureShift`` frame to frame by phase correlation of small gray copies of the
/// frames (``Params/workingWidth`` pixels wide). A shift whose correlation peak is weak (a
/// picture with no texture) is taken as none; so is one larger than a camera turns in a frame, or
/// one that jumps from the last frame's more than a camera accelerates (a cut); so is any in a
/// frame smaller than ``smallestSide`` on a side.
///
/// Measured on samples/vtest-panning.mp4 (vtest.avi through a window that pans and wobbles, so
/// the true shift is known) and on vtest.avi itself (a still camera, walkers), with Debian's
/// OpenCV 4.6 from Python: at 160, 240 and 320 pixels wide, the error is 0.0033, 0.0018 and
/// 0.0011 of the width a frame (mean; 95th percentile 0.010, 0.005, 0.003), the still camera
/// reads 0.0026, 0.0018, 0.0011 (median). On the panning clip scaled to 1280x720, one core: 256
/// wide with a bilinear shrink, 0.0020 (median) in 1.1 ms a frame, against 0.0014 in 2.2 to 4.3
/// ms at 320 with an area shrink (the shrink cost more than the correlation, and the Hann window,
/// made anew each frame, 0.5 ms: it is made once).
///
/// The correlation (two Fourier transforms and an inverse, about 0.6 ms of the 1.1) is passed
/// over when no whole-pixel shift of the gray copy lines it up with the last frame measured
/// better than none (``Image/isStill(since:)``, about 0.05 ms): a still camera, whatever walks
/// in front of it. The shift is then none, and the frame it is measured from stays the last
/// one measured, up to ``Params/longestStill`` frames, so that a pan slower than half a pixel of the
/// copy a frame (0.002 of the picture, about this estimator's own error) still adds up to a
/// shift that is measured.
package struct CameraShiftEstimator {
    package struct Params: Sendable, Equatable {
        /// Width of the gray copy the shift is measured on (its height keeps the frame's shape).
        /// `docktrack eval` on vtest.avi (a still camera) and vtest-panning.mp4, false people a
        /// frame: 0.157 and 0.233 at 160, 0.157 and 0.150 at 240, 0.110 and 0.133 at 320 (area
        /// shrink), 0.123 and 0.153 at 256 (bilinear shrink); 0.120 and 0.703 without following
        /// the camera.
        package var workingWidth = 256
        /// The weakest correlation peak taken as the camera's motion.
        package var minimumResponse = 0.1
        /// The largest shift a frame taken as the camera's motion, as a share of the picture: a
        /// cut in a film reads as anything up to the whole picture (0.71 at one of Megamind.avi's,
        /// which sent every box off it), a dock turning at 1 rad/s behind a 60-degree lens moves
        /// the picture 0.03 a frame at 30 fps, the panning test clip at most 0.09.
        package var largestShift = 0.15
        /// The largest change from the last frame's shift taken as the camera's motion (a camera
        /// turns with bounded acceleration): a cut or a new scene reads as one frame's jump from
        /// still (0.059 at one in Megamind.avi, between shifts of 0.0002) and is passed over, a
        /// pan that starts at once is followed from its second frame. A dock accelerating at 8
        /// rad/s^2 behind a 60-degree lens changes the shift by 0.009 a frame at 30 fps; the
        /// panning test clip by up to 0.018 at 10 fps.
        package var largestChange = 0.025
        /// Shifts smaller than this share of the picture are taken as none. 0: a threshold makes
        /// the boxes follow some frames' shifts and not others', and their velocities learn the
        /// difference (at 0.006, vtest-panning's people kept their identifier on 0.58 of their
        /// frames against 0.70 at 0.003).
        package var smallestShift = 0.0
        /// The most frames in a row measured against one earlier frame while the picture is
        /// still (1: every frame against the last, the correlation never passed over).
        package var longestStill = 4
        package init() {}
    }

    package static let smallestSide = 16
    package let params: Params
    /// The frame the next shift is measured from: the last measured.
    private var previous: Image?
    /// Frames in a row found still against `previous`.
    private var stillFrames = 0
    /// Frames whose correlation was passed over as still (for tests and the bench).
    package private(set) var stillSoFar = 0
    /// The Hann window of the working size, made once.
    private var window: Image?
    /// The shift read on the last frame, taken or not.
    private var lastMeasured = PictureShift.none

    package init(params: Params = Params()) {
        self.params = params
    }

    /// The shift from the last frame given to `image`; none for the first.
    package mutating func shift(to image: Image) throws(OpenCVError) -> PictureShift {
        guard image.width >= Self.smallestSide, image.height >= Self.smallestSide else {
            previous = nil
            return .none
        }
        let width = min(params.workingWidth, image.width)
        let height = max(Self.smallestSide, Int((Double(width) * Double(image.height) / Double(image.width)).rounded()))
        let size = ImageSize(width: width, height: height)
        let small = try image.smallFloatGray(size)
        if window?.size != size { window = try Image.hannWindow(size) }
        guard let previous, previous.size == small.size, let window else {
            self.previous = small
            stillFrames = 0
            lastMeasured = .none
            return .none
        }
        if stillFrames + 1 < params.longestStill, try small.isStill(since: previous) {
            stillFrames += 1
            stillSoFar += 1
            lastMeasured = .none
            return .none
        }
        self.previous = small
        stillFrames = 0
        let measured = try small.phaseShift(from: previous, window: window)
        let shift = PictureShift(x: measured.x / Double(width), y: -measured.y / Double(height))
        let change = hypot(shift.x - lastMeasured.x, shift.y - lastMeasured.y)
        lastMeasured = measured.response >= params.minimumResponse && shift.x.isFinite && shift.y.isFinite ? shift : .none
        guard change <= params.largestChange, measured.response >= params.minimumResponse, shift.x.isFinite, shift.y.isFinite,
              hypot(shift.x, shift.y) >= params.smallestShift, abs(shift.x) <= params.largestShift,
              abs(shift.y) <= params.largestShift else { return .none }
        return shift
    }

    /// Forgets the last frame (a cut: the next frame is not a moved copy of it).
    package mutating func reset() {
        previous = nil
        stillFrames = 0
        lastMeasured = .none
    }
}
