import CDockCV
import DockTrackCore
import DockTrackMedia
import Foundation

/// A palm MediaPipe's palm detector found, in picture pixels: its box, its seven key points
/// (0 the wrist's middle, 1 the index finger's root, 2 the middle finger's root, 3 the ring
/// finger's, 4 the little finger's, 5 and 6 the thumb's) and its score.
package struct Palm: Sendable, Equatable {
    package var box: PixelRect
    package var keyPoints: [PixelPoint]
    package var score: Double

    /// From the wrist toward the fingers (a unit vector; straight up when the points coincide).
    package var fingerward: (x: Double, y: Double) {
        let dx = keyPoints[2].x - keyPoints[0].x, dy = keyPoints[2].y - keyPoints[0].y
        let length = (dx * dx + dy * dy).squareRoot()
        return length > 0 && length.isFinite ? (dx / length, dy / length) : (0, -1)
    }

    /// The square the hand landmark model reads the whole hand in: MediaPipe's rule (2.6 times
    /// the palm box's longer side, its centre moved half the box's height toward the fingers),
    /// kept upright (DockTrack's crops are not turned; a raised hand is about upright anyway).
    package var handSquare: PixelRect {
        let side = 2.6 * max(box.width, box.height)
        let toward = fingerward
        let centreX = box.midX + 0.5 * box.height * toward.x, centreY = box.midY + 0.5 * box.height * toward.y
        return PixelRect(x: centreX - side / 2, y: centreY - side / 2, width: side, height: side)
    }
}

/// MediaPipe's palm detector (lite, 192x192, 2,016 anchors) on the inference engine: palms in a
/// region of the picture, one look. Apache-2.0, from PyPI `mediapipe` 0.10.21, its input made
/// planar BGR 0-255 by `tools/mediapipe-planar.py --unit` (`models/palm_detection_lite_planar.xml`).
package final class PalmDetector {
    package static let modelFile = "palm_detection_lite_planar.xml"
    static let side = 192
    /// Values a box takes on the output: centre offsets, width, height, seven key points.
    static let boxValues = 18
    /// MediaPipe's own: palms below this score are not reported; of two that overlap more than
    /// `suppressionOverlap`, the weaker goes.
    package var minimumScore = 0.5
    package var suppressionOverlap = 0.3
    private let network: EngineNetwork
    private let anchors: [(x: Double, y: Double)]
    /// Looks taken so far (the bench, tests).
    package private(set) var looks = 0

    package init(models: ModelStore, threads: Int = 1) throws(DetectorError) {
        network = try EngineNetwork.square(Self.modelFile, side: Self.side, models: models, threads: threads)
        // 24x24 cells of stride 8 with two anchors each, then 12x12 of stride 16 with six.
        var centres: [(x: Double, y: Double)] = []
        for (stride, perCell) in [(8, 2), (16, 6)] {
            let cells = Self.side / stride
            for row in 0..<cells {
                for column in 0..<cells {
                    centres += Array(repeating: ((Double(column) + 0.5) / Double(cells), (Double(row) + 0.5) / Double(cells)), count: perCell)
                }
            }
        }
        anchors = centres
    }

    /// The palms in `region` of `image` (pixels; parts outside the picture read as black), the
    /// region's longer side across the network's input. Strongest first; none in a region that
    /// cannot be looked in (``HandLandmarker/isReadable(_:in:)``).
    package func palms(in image: Image, region: PixelRect) throws(DetectorError) -> [Palm] {
        let name = "palm detector"
        guard HandLandmarker.isReadable(region, in: image.size) else { return [] }
        let side = Double(Self.side)
        let scale = side / max(region.width, region.height)
        let content = (width: max(1, min(Self.side, Int((region.width * scale).rounded()))),
                       height: max(1, min(Self.side, Int((region.height * scale).rounded()))))
        try network.run(on: image, region: region, content: ImageSize(width: content.width, height: content.height),
                        side: Self.side, detector: name)
        looks += 1
        var boxes: UnsafeBufferPointer<Float>?, scores: UnsafeBufferPointer<Float>?
        for index in 0..<2 {
            let (values, shape) = try network.output(index, detector: name)
            guard shape.count == 3, shape[1] == anchors.count else {
                throw .failed(detector: name, reason: "unexpected output shape \(shape) (\(anchors.count) anchors)")
            }
            if shape[2] == Self.boxValues { boxes = values } else if shape[2] == 1 { scores = values }
        }
        guard let boxes, let scores else { throw .failed(detector: name, reason: "no box and score outputs") }
        // Input pixels to picture pixels: the content's own scale on each axis, from the region's corner.
        let toPictureX = region.width / Double(content.width), toPictureY = region.height / Double(content.height)
        func picture(_ x: Double, _ y: Double) -> PixelPoint {
            PixelPoint(x: region.x + x * toPictureX, y: region.y + y * toPictureY)
        }
        var found: [Palm] = []
        for (index, anchor) in anchors.enumerated() {
            let score = BlazeFaceDetector.sigmoid(Double(scores[index]))
            guard score >= minimumScore else { continue }
            let base = index * Self.boxValues
            let values = (0..<Self.boxValues).map { Double(boxes[base + $0]) }
            guard values.allSatisfy(\.isFinite), values[2] > 0, values[3] > 0 else { continue }
            let centre = picture(values[0] + anchor.x * side, values[1] + anchor.y * side)
            let width = values[2] * toPictureX, height = values[3] * toPictureY
            let points = (0..<7).map { picture(values[4 + 2 * $0] + anchor.x * side, values[5 + 2 * $0] + anchor.y * side) }
            found.append(Palm(box: PixelRect(x: centre.x - width / 2, y: centre.y - height / 2, width: width, height: height),
                              keyPoints: points, score: score))
        }
        found.sort { $0.score > $1.score }
        var kept: [Palm] = []
        for palm in found where !kept.contains(where: { $0.box.intersectionOverUnion(palm.box) > suppressionOverlap }) {
            kept.append(palm)
        }
        return kept
    }
}

/// A hand as MediaPipe's hand landmark model reads it: 21 points in picture pixels (MediaPipe's
/// order: 0 the wrist; 1-4 the thumb, root to tip; 5-8 the index finger; 9-12 the middle;
/// 13-16 the ring; 17-20 the little finger) and how sure it is that a hand is there at all.
package struct HandReading: Sendable, Equatable {
    package var landmarks: [PixelPoint]
    package var presence: Double
    /// The square it was read in.
    package var square: PixelRect

    /// The box around the hand's points (the square read in, without points).
    package var extent: PixelRect {
        let xs = landmarks.map(\.x), ys = landmarks.map(\.y)
        guard let left = xs.min(), let right = xs.max(), let top = ys.min(), let bottom = ys.max() else { return square }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The square to read the same hand in next (MediaPipe's rule from landmarks: twice the
    /// points' extent, moved a tenth of it toward the fingers), upright.
    package var nextSquare: PixelRect {
        let hand = extent
        let side = 2 * max(hand.width, hand.height)
        let centreY = hand.midY - 0.1 * hand.height
        return PixelRect(x: hand.midX - side / 2, y: centreY - side / 2, width: side, height: side)
    }
}

/// MediaPipe's hand landmark model (lite, 224x224) on the inference engine: the 21 points of
/// the hand in a square of the picture. Apache-2.0, from PyPI `mediapipe` 0.10.21, made planar
/// by `tools/mediapipe-planar.py --unit` (`models/hand_landmark_lite_planar.xml`).
package final class HandLandmarker {
    package static let modelFile = "hand_landmark_lite_planar.xml"
    static let side = 224
    private let network: EngineNetwork
    /// Readings taken so far (the bench, tests).
    package private(set) var reads = 0

    package init(models: ModelStore, threads: Int = 1) throws(DetectorError) {
        network = try EngineNetwork.square(Self.modelFile, side: Self.side, models: models, threads: threads)
    }

    /// Whether `rect` can be looked in: finite, at least 8 px a side, overlapping the picture,
    /// and at most 8 times its longer side (beyond that, a box gone wrong).
    static func isReadable(_ rect: PixelRect, in size: ImageSize) -> Bool {
        let longest = 8 * Double(max(size.width, size.height))
        return [rect.x, rect.y, rect.width, rect.height].allSatisfy(\.isFinite) && rect.width >= 8 && rect.height >= 8
            && rect.width <= longest && rect.height <= longest
            && rect.x < Double(size.width) && rect.y < Double(size.height) && rect.x + rect.width > 0 && rect.y + rect.height > 0
    }

    /// The hand in `square` (pixels; outside the picture reads as black); `nil` for a square
    /// that cannot be looked in (``isReadable(_:in:)``).
    package func read(in image: Image, square: PixelRect) throws(DetectorError) -> HandReading? {
        let name = "hand landmarks"
        guard Self.isReadable(square, in: image.size) else { return nil }
        try network.run(on: image, region: square, content: ImageSize(width: Self.side, height: Self.side), side: Self.side, detector: name)
        reads += 1
        // Outputs in the model's order: the points (x, y, z in input pixels), the hand's
        // presence (0...1), which hand it is, the points in metres.
        let (points, pointsShape) = try network.output(0, detector: name)
        let (presence, presenceShape) = try network.output(1, detector: name)
        guard pointsShape.reduce(1, *) == 63, presenceShape.reduce(1, *) == 1 else {
            throw .failed(detector: name, reason: "unexpected output shapes \(pointsShape), \(presenceShape)")
        }
        let toPicture = (x: square.width / Double(Self.side), y: square.height / Double(Self.side))
        let landmarks = (0..<21).map {
            PixelPoint(x: square.x + Double(points[3 * $0]) * toPicture.x, y: square.y + Double(points[3 * $0 + 1]) * toPicture.y)
        }
        let sure = Double(presence[0])
        guard sure.isFinite, landmarks.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else {
            return HandReading(landmarks: [], presence: 0, square: square)
        }
        return HandReading(landmarks: landmarks, presence: min(max(sure, 0), 1), square: square)
    }
}

extension EngineNetwork {
    /// The network in `file` of `models`, its input one picture `side` x `side`, planar.
    static func square(_ file: String, side: Int, models: ModelStore, threads: Int,
                       precision: InferenceEngine.Precision = .f32) throws(DetectorError) -> EngineNetwork {
        let path = models.model(file)
        guard ModelStore.fileExists(path) else { throw .modelMissing(path: path, hint: models.modelsHint) }
        return try InferenceEngine.shared().network(model: path, inputShape: [1, 3, side, side], threads: threads,
                                                    precision: precision, hint: models.modelsHint)
    }

    /// Runs a network with a square planar input of `side` (``dcv_image_planar_input``): `region`
    /// of `image` (pixels; outside the picture black) scaled to `content` at its top-left corner,
    /// the rest black. The picture-to-input step of BlazeFace and the hand networks.
    func run(on image: Image, region: PixelRect, content: ImageSize, side: Int, detector: String) throws(DetectorError) {
        var status = dcv_status()
        if dcv_image_planar_input(image.handle, Float(region.x), Float(region.y), Float(region.width), Float(region.height),
                                  Int32(content.width), Int32(content.height), Int32(side), Int32(side), 0,
                                  input.baseAddress, &status) != 0 {
            throw .failed(detector: detector, reason: OpenCVError(status).message)
        }
        try run(detector: detector)
    }
}
