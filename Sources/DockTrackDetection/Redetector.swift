import DockTrackCore
import DockTrackMedia

/// Looks again for a face already tracked, only where the tracker predicts it in a new frame:
/// the cheap step between two full-frame detections, which keeps the box on a moving face and
/// checks on every frame that it is still a face.
///
/// Re-detection measures how far the face moved; the box it returns stays in the convention of
/// the detector that found the face (res10's boxes are taller than MTCNN's, for one): where the
/// re-detector saw the face relative to a box the detector had just placed (``reference(for:in:)``,
/// on a detection frame) is its zero.
public protocol Redetector: AnyObject {
    /// Where the re-detector sees the face in `face` (a box a detection just placed) relative to
    /// that box: the zero for later re-detections of it (`nil` when it sees no face there); and
    /// the five points its look read in `face` whether or not it saw a face there (`nil`: this
    /// re-detector reads none).
    func referenceReading(for face: UnitRect, in image: Image) throws(DetectorError) -> (placement: FacePlacement?, landmarks: FaceLandmarks?)
    /// The face found near `face` (unit coordinates, lower-left origin) in `image`, moved from
    /// `face` by as much as the re-detector saw it move from `reference` (its own box when there
    /// is no reference; `nil` when there is no face there); and the five points its look read in
    /// `face`, as ``referenceReading(for:in:)`` gives them.
    func redetectReading(face: UnitRect, reference: FacePlacement?, in image: Image) throws(DetectorError) -> (found: Observation?, landmarks: FaceLandmarks?)
}

extension Redetector {
    /// The placement of ``referenceReading(for:in:)`` alone.
    public func reference(for face: UnitRect, in image: Image) throws(DetectorError) -> FacePlacement? {
        try referenceReading(for: face, in: image).placement
    }

    /// The face of ``redetectReading(face:reference:in:)`` alone.
    public func redetect(face: UnitRect, reference: FacePlacement?, in image: Image) throws(DetectorError) -> Observation? {
        try redetectReading(face: face, reference: reference, in: image).found
    }
}

/// Where a face was seen relative to the box a look was asked about: its centre's offset in
/// widths and heights of that box, and its size over the box's.
public struct FacePlacement: Sendable, Equatable {
    public var dx: Double
    public var dy: Double
    public var scale: Double

    /// The placement of `seen` relative to `box`.
    public init(_ seen: UnitRect, relativeTo box: UnitRect) {
        dx = (seen.midX - box.midX) / box.width
        dy = (seen.midY - box.midY) / box.height
        scale = (seen.width * seen.height / (box.width * box.height)).squareRoot()
    }

    /// `box` moved and resized by how far `seen` (this placement, relative to `box`) is from
    /// `reference`.
    public func applied(to box: UnitRect, from reference: FacePlacement) -> UnitRect {
        let factor = scale / reference.scale
        let width = box.width * factor, height = box.height * factor
        let midX = box.midX + (dx - reference.dx) * box.width, midY = box.midY + (dy - reference.dy) * box.height
        return UnitRect(x: midX - width / 2, y: midY - height / 2, width: width, height: height)
    }
}

/// Re-detection with MTCNN's output network (O-Net, `models/onet.onnx`) on the predicted face
/// box: one 48x48 run, a face probability of at least ``minimumFaceScore`` and the box its
/// regression puts on the face, which follows a face that moved up to about a third of its size.
public final class FaceRedetector: Redetector {
    private let net: FaceLandmarkDetector
    /// O-Net's face probability a face must reach (``VerifiedFaceDetector``'s threshold).
    public var minimumFaceScore = 0.8

    public init(_ net: FaceLandmarkDetector) {
        self.net = net
    }

    public convenience init(models: ModelStore) throws(DetectorError) {
        self.init(try FaceLandmarkDetector(models: models))
    }

    public func referenceReading(for face: UnitRect, in image: Image) throws(DetectorError) -> (placement: FacePlacement?, landmarks: FaceLandmarks?) {
        let (seen, landmarks) = try look(at: face, in: image)
        return (seen.map { FacePlacement($0.rect, relativeTo: face) }, landmarks)
    }

    public func redetectReading(face: UnitRect, reference: FacePlacement?, in image: Image) throws(DetectorError) -> (found: Observation?, landmarks: FaceLandmarks?) {
        let (seen, landmarks) = try look(at: face, in: image)
        guard let seen else { return (nil, landmarks) }
        let rect = reference.map { FacePlacement(seen.rect, relativeTo: face).applied(to: face, from: $0) } ?? seen.rect
        return (Observation(type: .humanFace, rect: rect, confidence: seen.score), landmarks)
    }

    /// O-Net's face near `face`, when it is sure enough, and the points it read there either
    /// way; neither for a box it cannot look at (not finite, under 8 px, outside the picture).
    private func look(at face: UnitRect, in image: Image) throws(DetectorError) -> (FaceSighting?, FaceLandmarks?) {
        let pixels = face.pixelRect(in: image.size)
        guard [pixels.x, pixels.y, pixels.width, pixels.height].allSatisfy(\.isFinite), pixels.width >= 8, pixels.height >= 8,
              face.intersectionArea(with: UnitRect(x: 0, y: 0, width: 1, height: 1)) > 0 else { return (nil, nil) }
        let sighting = try net.face(in: image, near: face)
        guard sighting.score >= minimumFaceScore, sighting.rect.width > 0, sighting.rect.height > 0 else { return (nil, sighting.landmarks) }
        return (sighting, sighting.landmarks)
    }
}
