import CDockCV
import DockTrackCore
import DockTrackMedia
import Foundation

/// Faces with MediaPipe's BlazeFace on the inference engine: the whole picture in one look,
/// scaled into the network's square input (its longer side across, the rest padded black, as
/// MediaPipe letterboxes it). Two networks (Apache-2.0, from PyPI `mediapipe` 0.10.21, their
/// input made planar BGR 0-255 by `tools/mediapipe-planar.py`):
///
/// - **full range** (`models/blazeface_full_range_planar.xml`, 192x192 input, 2,304 anchors on
///   a 48x48 grid): faces from about 1/25 of the picture's longer side to close-ups;
/// - **short range** (`models/blazeface_short_range_planar.xml`, 128x128, 896 anchors): faces
///   from about a tenth of the longer side, near the camera; cheaper.
///
/// It boxes animals' faces too (dogs.jpg): ``DetectorCatalog`` offers it with MTCNN's O-Net
/// checking each face (`blazeface-face-verified`), as res10's faces are checked.
package final class BlazeFaceDetector: Detector {
    package enum Range: String, Sendable, CaseIterable {
        case full, short
    }

    package struct Params: Sendable, Equatable {
        package var range = Range.full
        /// The lowest face score reported, whatever the caller asks (the caller's
        /// `minimumConfidence` raises it); MediaPipe's own: 0.6 full range, 0.5 short range.
        package var minimumScore: Double?
        /// Of two faces overlapping more than this (intersection over union), the weaker is
        /// dropped (MediaPipe's 0.3).
        package var suppressionOverlap = 0.3
        /// Threads the engine computes one look with (0: the engine's choice).
        package var threads = 1
        package var precision = InferenceEngine.Precision.f32
        package init(range: Range = .full) { self.range = range }
    }

    /// A network's geometry: its file, its square input's side, its anchor grids (stride, anchors
    /// a cell) in output order, and the score MediaPipe reports from.
    struct Network: Sendable {
        var file: String
        var side: Int
        var grids: [(stride: Int, perCell: Int)]
        var minimumScore: Double

        static let full = Network(file: "blazeface_full_range_planar.xml", side: 192, grids: [(4, 1)], minimumScore: 0.6)
        static let short = Network(file: "blazeface_short_range_planar.xml", side: 128, grids: [(8, 2), (16, 6)], minimumScore: 0.5)

        /// Anchor centres (share of the input's side), in the order of the network's outputs.
        var anchors: [(x: Double, y: Double)] {
            var centres: [(x: Double, y: Double)] = []
            for (stride, perCell) in grids {
                let cells = side / stride
                for row in 0..<cells {
                    for column in 0..<cells {
                        let centre = ((Double(column) + 0.5) / Double(cells), (Double(row) + 0.5) / Double(cells))
                        centres += Array(repeating: centre, count: perCell)
                    }
                }
            }
            return centres
        }
    }

    /// The values a box takes on the output: centre x, y offsets, width, height (input pixels),
    /// then six key points (eyes, nose, mouth, ears).
    static let boxValues = 16
    /// Below this (px, either side) a picture holds no face to find.
    static let smallestPicture = ImageSize(width: 16, height: 16)

    package let name: String
    package let params: Params
    private let geometry: Network
    private let anchors: [(x: Double, y: Double)]
    private let network: EngineNetwork
    /// Looks taken so far (for the bench and tests).
    package private(set) var looks = 0

    package init(models: ModelStore, params: Params = Params()) throws(DetectorError) {
        self.params = params
        geometry = params.range == .full ? .full : .short
        anchors = geometry.anchors
        name = params.range == .full ? "blazeface-face" : "blazeface-short-face"
        network = try EngineNetwork.square(geometry.file, side: geometry.side, models: models, threads: params.threads,
                                           precision: params.precision)
    }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let size = image.size
        guard size.width >= Self.smallestPicture.width, size.height >= Self.smallestPicture.height else {
            throw .frameTooSmall(detector: name, size: size, minimum: Self.smallestPicture)
        }
        // The picture's longer side across the input, at its top-left; the rest black.
        let side = Double(geometry.side)
        let scale = side / Double(max(size.width, size.height))
        let content = ImageSize(width: max(1, min(geometry.side, Int((Double(size.width) * scale).rounded()))),
                                height: max(1, min(geometry.side, Int((Double(size.height) * scale).rounded()))))
        try network.run(on: image, region: PixelRect(x: 0, y: 0, width: Double(size.width), height: Double(size.height)),
                        content: content, side: geometry.side, detector: name)
        looks += 1
        // The two outputs told apart by their last dimension: boxes (16 values) and scores (1).
        var boxes: UnsafeBufferPointer<Float>?, scores: UnsafeBufferPointer<Float>?
        for index in 0..<2 {
            let (values, shape) = try network.output(index, detector: name)
            guard shape.count == 3, shape[0] == 1, shape[1] == anchors.count else {
                throw .failed(detector: name, reason: "unexpected output shape \(shape) (\(anchors.count) anchors)")
            }
            if shape[2] == Self.boxValues { boxes = values } else if shape[2] == 1 { scores = values }
        }
        guard let boxes, let scores else { throw .failed(detector: name, reason: "no box and score outputs") }
        let least = max(params.minimumScore ?? geometry.minimumScore, minimumConfidence.isFinite ? minimumConfidence : 0)
        // Input pixels to picture pixels (the content's own scale on each axis), then to unit
        // coordinates (Geometry's one conversion).
        let scaleX = Double(content.width) / Double(size.width), scaleY = Double(content.height) / Double(size.height)
        var found: [Observation] = []
        for (index, anchor) in anchors.enumerated() {
            let score = Self.sigmoid(Double(scores[index]))
            guard score >= least else { continue }
            let values = UnsafeBufferPointer(rebasing: boxes[(index * Self.boxValues)..<(index * Self.boxValues + 4)])
            let centreX = Double(values[0]) + anchor.x * side, centreY = Double(values[1]) + anchor.y * side
            let width = Double(values[2]), height = Double(values[3])
            guard centreX.isFinite, centreY.isFinite, width.isFinite, height.isFinite, width > 0, height > 0 else { continue }
            let rect = PixelRect(x: (centreX - width / 2) / scaleX, y: (centreY - height / 2) / scaleY,
                                 width: width / scaleX, height: height / scaleY)
            let unit = UnitRect(rect, in: size).clippedToUnit()
            guard unit.width > 0, unit.height > 0 else { continue }
            found.append(Observation(type: .humanFace, rect: unit, confidence: score))
        }
        return found.suppressingOverlaps(above: params.suppressionOverlap)
    }

    /// The network's raw score as a probability (clipped as MediaPipe clips it, at ±100).
    static func sigmoid(_ raw: Double) -> Double {
        1 / (1 + exp(-min(max(raw, -100), 100)))
    }
}
