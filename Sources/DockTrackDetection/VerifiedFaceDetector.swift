import DockTrackCore
import DockTrackMedia
import Foundation

/// A face detector whose faces are checked by a second network: MTCNN's output network (O-Net,
/// `models/onet.onnx`, already used for landmarks) looks at each face box and says how sure it is
/// that a human face is there; faces below ``minimumFaceScore`` (0.8) are dropped. On res10's own
/// boxes it separates real faces (0.97 and above on the public labelled set) from dogs' (0.66 at
/// most over 24 panned and zoomed views of samples/faces/dogs.jpg, 0.32 on the whole picture), at one
/// 48x48 network run per face. The confidence kept is res10's, so 0.5 stays its operating point.
/// Other observations pass unchanged.
package final class VerifiedFaceDetector: Detector {
    package let base: any Detector
    private let verifier: FaceLandmarkDetector
    /// O-Net's face probability a face must reach (0...1).
    package var minimumFaceScore: Double

    package init(_ base: any Detector, models: ModelStore, minimumFaceScore: Double = 0.8) throws(DetectorError) {
        self.base = base
        verifier = try FaceLandmarkDetector(models: models)
        self.minimumFaceScore = minimumFaceScore
    }

    package var name: String { "\(base.name)-verified" }
    /// Each face is confirmed by MTCNN's output network.
    package var checksWhatItFinds: Bool { true }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        var kept: [Observation] = []
        for observation in try base.detect(in: image, minimumConfidence: minimumConfidence) {
            guard observation.type == .humanFace else {
                kept.append(observation)
                continue
            }
            let score = try verifier.landmarks(in: image, face: observation.rect).faceScore
            if score >= minimumFaceScore { kept.append(observation) }
        }
        return kept
    }
}
