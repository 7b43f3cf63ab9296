import Foundation

/// Reads, from each tracked face, whether the person is speaking (mouth motion) and whether
/// they look at the camera (head yaw from landmarks).
///
/// Speaking: every frame, the mouth region (placed by the landmarks) is compared with the same
/// region in the previous frame, and so is a rigid reference region between the eyes and the
/// nose. Lips that move change the mouth region more than the reference; a head that moves,
/// a camera that shakes or a box that jitters changes both alike. The mean excess of mouth
/// motion over a short window, through a logistic curve, is the confidence.
public final class FaceCueEstimator {
    public struct Params: Sendable, Equatable {
        /// Seconds of history the speaking signal averages.
        public var speakingWindow = 1.0
        /// Mouth-over-reference motion (normalized gray levels per frame) at which the speaking
        /// confidence is 0.5, and the spread of the logistic curve around it.
        public var speakingMidpoint = 0.12
        public var speakingSpread = 0.04
        /// Nose offset (eye distances) at which looking-at-camera falls to about 0.37.
        public var yawTolerance = 0.22
        /// Seconds over which looking-at-camera is smoothed.
        public var lookingSmoothing = 0.3
        /// Faces smaller than this many pixels (eye distance) are too small to read.
        public var minimumEyeDistance = 6.0
        public init() {}
    }

    /// What the estimator remembers about one face.
    struct FaceHistory {
        var mouth: [Float]?
        var reference: [Float]?
        var samples: [(time: Double, excess: Double)] = []
        var looking: Double?
        var lastTime: Double
    }

    public let params: Params
    private let landmarks: FaceLandmarkDetector
    private var histories: [UUID: FaceHistory] = [:]

    public init(landmarks: FaceLandmarkDetector, params: Params = Params()) {
        self.landmarks = landmarks
        self.params = params
    }

    /// The last landmarks found per subject in the most recent frame (for drawing).
    public private(set) var lastLandmarks: [UUID: FaceLandmarks] = [:]

    /// Fills `speakingConfidence` and `lookingAtCameraConfidence` of the people in `subjects`
    /// whose face is known, from `image` taken at `time`.
    public func annotate(_ subjects: inout [TrackedSubject], image: Image, time: Double) throws(DetectorError) {
        lastLandmarks = [:]
        for i in subjects.indices {
            guard subjects[i].kind == .person, let face = subjects[i].faceRect else { continue }
            let id = subjects[i].id
            var history = histories[id] ?? FaceHistory(lastTime: time)
            let marks = try landmarks.landmarks(in: image, face: face)
            lastLandmarks[id] = marks
            if marks.eyeDistance >= params.minimumEyeDistance && marks.faceScore > 0.5 {
                try sampleMotion(marks, image: image, time: time, into: &history)
                let looking = marks.faceScore * exp(-pow(marks.yawOffset / params.yawTolerance, 2))
                let alpha = history.looking == nil ? 1 : min(1, (time - history.lastTime) / params.lookingSmoothing)
                history.looking = (history.looking ?? looking) * (1 - alpha) + looking * alpha
            } else {
                history.mouth = nil
                history.reference = nil
            }
            history.samples.removeAll { time - $0.time > params.speakingWindow }
            history.lastTime = time
            histories[id] = history
            subjects[i].lookingAtCameraConfidence = history.looking
            subjects[i].speakingConfidence = speaking(history)
        }
        let present = Set(subjects.map(\.id))
        histories = histories.filter { present.contains($0.key) }
    }

    private func speaking(_ history: FaceHistory) -> Double? {
        guard !history.samples.isEmpty else { return history.looking == nil ? nil : 0 }
        let excess = history.samples.map(\.excess).reduce(0, +) / Double(history.samples.count)
        return 1 / (1 + exp(-(excess - params.speakingMidpoint) / params.speakingSpread))
    }

    private func sampleMotion(_ marks: FaceLandmarks, image: Image, time: Double, into history: inout FaceHistory) throws(DetectorError) {
        let d = marks.eyeDistance
        let mouthCenter = marks.mouthMidpoint
        let mouthWidth = max(hypot(marks.mouthRight.x - marks.mouthLeft.x, marks.mouthRight.y - marks.mouthLeft.y), 0.6 * d)
        let mouthRegion = PixelRect(x: mouthCenter.x - 0.8 * mouthWidth, y: mouthCenter.y - 0.45 * mouthWidth,
                                    width: 1.6 * mouthWidth, height: 0.9 * mouthWidth)
        let eyes = marks.eyesMidpoint
        let referenceCenter = (x: (eyes.x + marks.nose.x) / 2, y: (eyes.y + marks.nose.y) / 2)
        let referenceRegion = PixelRect(x: referenceCenter.x - 0.8 * d, y: referenceCenter.y - 0.4 * d, width: 1.6 * d, height: 0.8 * d)
        let mouth = try preparing("speaking") { () throws(OpenCVError) in Self.normalized(try image.grayPatch(mouthRegion, width: 24, height: 12)) }
        let reference = try preparing("speaking") { () throws(OpenCVError) in Self.normalized(try image.grayPatch(referenceRegion, width: 24, height: 12)) }
        if let previousMouth = history.mouth, let previousReference = history.reference {
            let excess = Self.difference(mouth, previousMouth) - Self.difference(reference, previousReference)
            history.samples.append((time, excess))
        }
        history.mouth = mouth
        history.reference = reference
    }

    /// Zero mean, unit deviation (plus a floor, so flat regions do not amplify noise).
    static func normalized(_ values: [Float]) -> [Float] {
        let n = Float(values.count)
        let mean = values.reduce(0, +) / n
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / n
        let scale = 1 / (variance.squareRoot() + 4)
        return values.map { ($0 - mean) * scale }
    }

    /// Mean absolute difference.
    static func difference(_ a: [Float], _ b: [Float]) -> Double {
        var sum: Float = 0
        for i in a.indices { sum += abs(a[i] - b[i]) }
        return Double(sum / Float(a.count))
    }
}
