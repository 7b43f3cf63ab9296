import DockTrackCore
import DockTrackMedia
import CDockCV
import Foundation

/// Faces or bodies with OpenCV's boosted cascades (Haar or LBP features, from Debian's
/// opencv-data). Lighter than the DNN, weaker on hard poses; profile cascades run on the image
/// and on its mirror so that faces turned either way are found.
package final class CascadeDetector: Detector {
    package struct Params: Sendable, Equatable {
        /// Images wider than this are shrunk to it before detection.
        package var workingWidth = 640
        /// The pyramid's scale step (`scaleFactor` of detectMultiScale).
        package var scaleFactor = 1.1
        /// Neighbouring hits a detection needs (`minNeighbors`).
        package var minimumNeighbours = 3
        /// The smallest object searched for, as a fraction of the image height.
        package var minimumRelativeHeight = 0.04
        package init() {}
    }

    /// One cascade file and whether it also runs on the mirrored image.
    package struct Cascade: Sendable, Equatable {
        package var path: String
        package var alsoMirrored: Bool
        package init(path: String, alsoMirrored: Bool = false) {
            self.path = path
            self.alsoMirrored = alsoMirrored
        }
    }

    package let name: String
    package let type: ObservationType
    package let params: Params
    private let cascades: [(handle: OpaquePointer, alsoMirrored: Bool)]

    package init(name: String, type: ObservationType, cascades: [Cascade], hint: String, params: Params = Params()) throws(DetectorError) {
        var loaded: [(OpaquePointer, Bool)] = []
        for cascade in cascades {
            let path = cascade.path
            do {
                let handle = try loadModel(path, hint: hint) { dcv_cascade_open(path, $0) }
                loaded.append((handle, cascade.alsoMirrored))
            } catch {
                loaded.forEach { dcv_cascade_destroy($0.0) }
                throw error
            }
        }
        self.name = name
        self.type = type
        self.params = params
        self.cascades = loaded.map { (handle: $0.0, alsoMirrored: $0.1) }
    }

    deinit { cascades.forEach { dcv_cascade_destroy($0.handle) } }

    /// Frontal and profile faces with Haar cascades (frontal `alt2`, profile both ways).
    package static func haarFaces(models: ModelStore) throws(DetectorError) -> CascadeDetector {
        try CascadeDetector(name: "haar-face", type: .humanFace, cascades: [
            Cascade(path: models.haarCascade("haarcascade_frontalface_alt2.xml")),
            Cascade(path: models.haarCascade("haarcascade_profileface.xml"), alsoMirrored: true),
        ], hint: models.cascadesHint)
    }

    /// Frontal and profile faces with LBP cascades: the fastest face detector.
    package static func lbpFaces(models: ModelStore) throws(DetectorError) -> CascadeDetector {
        try CascadeDetector(name: "lbp-face", type: .humanFace, cascades: [
            Cascade(path: models.lbpCascade("lbpcascade_frontalface_improved.xml")),
            Cascade(path: models.lbpCascade("lbpcascade_profileface.xml"), alsoMirrored: true),
        ], hint: models.cascadesHint)
    }

    /// Full and upper bodies with Haar cascades.
    package static func haarBodies(models: ModelStore) throws(DetectorError) -> CascadeDetector {
        var params = Params()
        params.minimumRelativeHeight = 0.1
        return try CascadeDetector(name: "cascade-body", type: .humanBody, cascades: [
            Cascade(path: models.haarCascade("haarcascade_fullbody.xml")),
            Cascade(path: models.haarCascade("haarcascade_upperbody.xml")),
        ], hint: models.cascadesHint, params: params)
    }

    /// Maps a neighbour count onto 0...1 so that the default `minimumNeighbours` (3) is 0.5.
    static func confidence(neighbours: Float) -> Double {
        let n = Double(neighbours)
        return n / (n + 3)
    }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let work = image.size.fitting(maxWidth: params.workingWidth)
        let gray = try preparing(name) { () throws(OpenCVError) in try image.resized(to: work).gray(equalized: true) }
        let mirror = cascades.contains(where: \.alsoMirrored) ? try preparing(name) { () throws(OpenCVError) in try gray.mirrored() } : nil
        let minSide = Int32(max(12, Double(work.height) * params.minimumRelativeHeight))
        var found: [Observation] = []
        for cascade in cascades {
            for (picture, mirrored) in [(gray, false), (mirror, true)] where !mirrored || cascade.alsoMirrored {
                guard let picture else { continue }
                let boxes = try detectBoxes(name) { out, capacity, status in
                    dcv_cascade_detect(cascade.handle, picture.handle, params.scaleFactor, Int32(params.minimumNeighbours),
                                       minSide, minSide, 0, 0, out, capacity, status)
                }
                for box in boxes {
                    var rect = box.unitRect(in: work)
                    if mirrored { rect.x = 1 - rect.maxX }
                    let confidence = Self.confidence(neighbours: box.score)
                    if confidence >= minimumConfidence {
                        found.append(Observation(type: type, rect: rect, confidence: confidence))
                    }
                }
            }
        }
        return found.suppressingOverlaps()
    }
}
