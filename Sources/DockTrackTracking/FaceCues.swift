import DockTrackCore
import DockTrackMedia
import DockTrackDetection
import DockTrackAudio
import Foundation

/// Reads, from each tracked face, whether the person is speaking (mouth motion) and whether
/// they look at the camera (head yaw from landmarks).
///
/// Speaking: every frame, a square over the mouth (placed by the landmarks, smoothed over
/// frames) yields one number, its openness: how much darker its darkest row is than the
/// square's typical (median) row, in units of its contrast. Lips that move make the openness swing; a closed or
/// still mouth keeps it flat, and so does a head that moves or a camera that shakes, since the
/// square moves with the face. The same number over a rigid square between the eyes and the
/// nose measures what is left of such effects. The speaking confidence is a logistic curve of
/// the openness' standard deviation over a short window, less half the reference's.
package final class FaceCueEstimator {
    package struct Params: Sendable, Equatable {
        /// Seconds of history the speaking signal looks at.
        package var speakingWindow = 0.8
        /// Samples needed in the window before speaking is judged.
        package var minimumSamples = 5
        /// Mouth swing (openness deviation less half the reference's) at which the speaking
        /// confidence is 0.5, and the spread of the logistic curve around it. Measured medians:
        /// 0.091 for the talking man of carphone_pristine.mp4, 0.22 for Megamind.avi, 0.033 and
        /// 0.007 for the astronaut and Grace Hopper portraits drifting in a virtual handheld
        /// camera, 0 for a still frame.
        package var speakingMidpoint = 0.06
        package var speakingSpread = 0.012
        /// Weight of the previous landmarks when smoothing them (0: no smoothing).
        package var landmarkSmoothing = 0.5
        /// Nose offset (eye distances) at which looking-at-camera falls to about 0.37.
        package var yawTolerance = 0.22
        /// Seconds over which looking-at-camera is smoothed.
        package var lookingSmoothing = 0.3
        /// Faces smaller than this many pixels (eye distance) are too small to read.
        package var minimumEyeDistance = 6.0
        package init() {}
    }

    /// What the estimator remembers about one face.
    struct FaceHistory {
        var landmarks: FaceLandmarks?
        var samples: [(time: Double, mouth: Double, reference: Double)] = []
        var looking: Double?
        var lastTime: Double
    }

    package let params: Params
    private let landmarks: FaceLandmarkDetector
    private var histories: [UUID: FaceHistory] = [:]

    package init(landmarks: FaceLandmarkDetector, params: Params = Params()) {
        self.landmarks = landmarks
        self.params = params
    }

    /// The smoothed landmarks per subject in the most recent frame (for drawing).
    package var lastLandmarks: [UUID: FaceLandmarks] { histories.compactMapValues(\.landmarks) }

    /// Fills `speakingConfidence` and `lookingAtCameraConfidence` of the people in `subjects`
    /// whose face is known, from `image` taken at `time`. `read`: the five points already read
    /// in some of these faces on this picture (by the re-detector), taken as they are.
    package func annotate(_ subjects: inout [TrackedSubject], image: Image, time: Double,
                         read: [UUID: FaceLandmarks] = [:]) throws(DetectorError) {
        for i in subjects.indices {
            guard subjects[i].kind == .person, let face = subjects[i].faceRect else { continue }
            let id = subjects[i].id
            var history = histories[id] ?? FaceHistory(lastTime: time)
            // A face clipped to a sliver at the picture's edge has no landmarks to read.
            let pixels = face.pixelRect(in: image.size)
            let readable = [pixels.width, pixels.height].allSatisfy { $0.isFinite && $0 >= 4 }
            var found = readable ? read[id] : nil
            if readable, found == nil { found = try landmarks.landmarks(in: image, face: face) }
            if let found, found.eyeDistance >= params.minimumEyeDistance && found.faceScore > 0.5 {
                let marks = history.landmarks.map { $0.blended(with: found, keeping: params.landmarkSmoothing) } ?? found
                history.landmarks = marks
                try sample(marks, image: image, time: time, into: &history)
                let looking = found.faceScore * exp(-pow(found.yawOffset / params.yawTolerance, 2))
                let alpha = history.looking == nil ? 1 : min(1, (time - history.lastTime) / params.lookingSmoothing)
                history.looking = (history.looking ?? looking) * (1 - alpha) + looking * alpha
            } else {
                history.landmarks = nil
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

    /// The mouth-openness samples of the person `id` over the speaking window (time, openness),
    /// for matching against the sound (``AudioVisualSpeaking``).
    package func mouthSeries(of id: UUID) -> [(time: Double, openness: Double)] {
        histories[id]?.samples.map { ($0.time, $0.mouth) } ?? []
    }

    /// The mouth's swing over the window, less half the reference's; `nil` with too few samples.
    func mouthSwing(_ history: FaceHistory) -> Double? {
        guard history.samples.count >= params.minimumSamples else { return nil }
        return Self.deviation(history.samples.map(\.mouth)) - 0.5 * Self.deviation(history.samples.map(\.reference))
    }

    private func speaking(_ history: FaceHistory) -> Double? {
        guard history.looking != nil else { return nil }
        guard let swing = mouthSwing(history) else { return 0 }
        return 1 / (1 + exp(-(swing - params.speakingMidpoint) / params.speakingSpread))
    }

    private func sample(_ marks: FaceLandmarks, image: Image, time: Double, into history: inout FaceHistory) throws(DetectorError) {
        let mouthWidth = max(hypot(marks.mouthRight.x - marks.mouthLeft.x, marks.mouthRight.y - marks.mouthLeft.y), 0.6 * marks.eyeDistance)
        let mouth = marks.mouthMidpoint, eyes = marks.eyesMidpoint
        let mouthSquare = PixelRect(x: mouth.x - 0.6 * mouthWidth, y: mouth.y + 0.05 * mouthWidth - 0.5 * mouthWidth,
                                    width: 1.2 * mouthWidth, height: mouthWidth)
        let reference = (x: (eyes.x + marks.nose.x) / 2, y: (eyes.y + marks.nose.y) / 2)
        let referenceSquare = PixelRect(x: reference.x - 0.6 * mouthWidth, y: reference.y - 0.5 * mouthWidth,
                                        width: 1.2 * mouthWidth, height: mouthWidth)
        let patches = try preparing("speaking") { () throws(OpenCVError) in
            (try image.grayPatch(mouthSquare, width: 16, height: 16), try image.grayPatch(referenceSquare, width: 16, height: 16))
        }
        history.samples.append((time, Self.openness(patches.0, width: 16), Self.openness(patches.1, width: 16)))
        if ProcessInfo.processInfo.environment["DOCKTRACK_DEBUG_CUES"] != nil, let swing = mouthSwing(history) {
            let mouth = Self.deviation(history.samples.map(\.mouth)), reference = Self.deviation(history.samples.map(\.reference))
            FileHandle.standardError.write(Data(String(format: "cue %.3f swing %.4f mouth %.4f reference %.4f\n", time, swing, mouth, reference).utf8))
        }
    }

    /// How much darker the darkest row of a square patch is than its median row, in units of its
    /// contrast (standard deviation plus a floor so flat patches do not amplify noise).
    static func openness(_ patch: [Float], width: Int) -> Double {
        let rows = stride(from: 0, to: patch.count, by: width).map { start in
            patch[start..<start + width].reduce(0, +) / Float(width)
        }
        let sorted = rows.sorted()
        let typical = Double(sorted[sorted.count / 2]), darkest = Double(sorted.first ?? 0)
        return (typical - darkest) / (deviation(patch.map(Double.init)) + 4)
    }

    static func deviation(_ values: [Double]) -> Double { Statistics.standardDeviation(values) }
}

extension FaceLandmarks {
    /// A weighted mean with `new`: `keeping` of this one, the rest of `new`.
    func blended(with new: FaceLandmarks, keeping weight: Double) -> FaceLandmarks {
        func mix(_ a: Point, _ b: Point) -> Point { Point(x: a.x * weight + b.x * (1 - weight), y: a.y * weight + b.y * (1 - weight)) }
        return FaceLandmarks(leftEye: mix(leftEye, new.leftEye), rightEye: mix(rightEye, new.rightEye), nose: mix(nose, new.nose),
                             mouthLeft: mix(mouthLeft, new.mouthLeft), mouthRight: mix(mouthRight, new.mouthRight),
                             faceScore: new.faceScore)
    }
}
