import DockTrackCore
import DockTrackMedia
import Foundation

/// Runs several detectors on the same image and merges what they find.
package final class CombinedDetector: Detector {
    package let parts: [any Detector]
    /// Every part checks what it finds.
    package var checksWhatItFinds: Bool { parts.allSatisfy(\.checksWhatItFinds) }
    package var name: String { parts.map(\.name).joined(separator: "+") }

    package init(_ parts: [any Detector]) {
        self.parts = parts
    }

    package func prepare(for size: ImageSize) throws(DetectorError) {
        for part in parts { try part.prepare(for: size) }
    }

    /// What every part finds. A part that cannot look at a frame this small is passed over
    /// (faces are still found in a frame too small for a body); when no part can, the first
    /// part's error is thrown.
    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        var all: [Observation] = []
        var tooSmall: DetectorError?
        var looked = false
        for part in parts {
            do {
                all += try part.detect(in: image, minimumConfidence: minimumConfidence)
                looked = true
            } catch .frameTooSmall(let detector, let size, let minimum) {
                tooSmall = tooSmall ?? .frameTooSmall(detector: detector, size: size, minimum: minimum)
            }
        }
        if !looked, let tooSmall { throw tooSmall }
        return Self.merged(all)
    }

    /// What the parts found, as one list: overlaps suppressed per type, and the bodies that
    /// are pieces of a close-up face found with them, or of one of `besideFaces` (found in an
    /// earlier round by a part that did not run this one), dropped
    /// (``Swift/Array/droppingBodiesBesideCloseUps(heightRatio:facesAside:closeUpFaceHeight:alsoBeside:)``).
    package static func merged(_ found: [Observation], besideFaces: [UnitRect] = []) -> [Observation] {
        found.suppressingOverlaps().droppingBodiesBesideCloseUps(alsoBeside: besideFaces)
    }
}
