/// What a detector can see (DockKit's observation types).
public enum ObservationType: String, Sendable, Codable, CaseIterable {
    case humanFace
    case humanBody
    case object
}

/// One thing seen in one frame.
public struct Observation: Sendable, Equatable {
    /// The most observations one frame or one `track` request may bring (a crowd is a few dozen):
    /// the tracker pairs each with each track, and 10,000 a frame took 23 s and 1.8 GB.
    public static let mostInOneFrame = 256

    public var type: ObservationType
    /// Where, in unit coordinates with the origin at the lower-left.
    public var rect: UnitRect
    /// How sure the detector is, 0...1 (each detector maps its native score onto this scale
    /// so that 0.5 is its usual operating point).
    public var confidence: Double
    /// The caller's own identifier for what it observed (custom tracking, DockKit's
    /// `Observation.identifier`): the same identifier is the same subject from frame to frame.
    public var identifier: Int?
    /// How far a face is turned from the camera, radians (custom tracking, DockKit's
    /// `faceYawAngle`): 0 looks at the camera.
    public var faceYaw: Double?

    /// DockKit's `Observation(identifier:type:rect:faceYawAngle:)`: an app's own detection, as
    /// sure as the app is (confidence 1).
    public init(identifier: Int, type: ObservationType, rect: UnitRect, faceYaw: Double? = nil) {
        self.init(type: type, rect: rect, confidence: 1, identifier: identifier, faceYaw: faceYaw)
    }

    public init(type: ObservationType, rect: UnitRect, confidence: Double, identifier: Int? = nil, faceYaw: Double? = nil) {
        self.type = type
        self.rect = rect
        self.confidence = confidence
        self.identifier = identifier
        self.faceYaw = faceYaw
    }
}

extension Array where Element == Observation {
    /// Non-maximum suppression per type: of two observations of the same type that overlap by
    /// more than `overlap` (intersection over union), or of which one lies inside the other
    /// for more than `containment` of its area, the less confident one is dropped.
    /// The result is ordered by type, then by decreasing confidence.
    public func suppressingOverlaps(above overlap: Double = 0.3, containment: Double = 0.8) -> [Observation] {
        var kept: [Observation] = []
        for candidate in sorted(by: { $0.confidence > $1.confidence }) {
            let clashes = kept.contains {
                $0.type == candidate.type
                    && ($0.rect.intersectionOverUnion(candidate.rect) > overlap
                        || $0.rect.intersectionOverSmaller(candidate.rect) > containment)
            }
            if !clashes { kept.append(candidate) }
        }
        let order = ObservationType.allCases
        return kept.sorted {
            let a = order.firstIndex(of: $0.type)!, b = order.firstIndex(of: $1.type)!
            return a != b ? a < b : $0.confidence > $1.confidence
        }
    }

    /// The bodies that are pieces of a close-up, dropped. A whole body less than `heightRatio`
    /// times as tall as a face found with it, whose middle lies less than `facesAside` face
    /// widths beside that face, is the close-up person's hair, shoulder or arm, or the backdrop
    /// behind them (a flag, a wall): a standing person is about 7 faces tall, so such a person
    /// would be about 5 times as far away as the face, in the part of the picture the close-up
    /// person covers. The body detectors fire there: Dalal-Triggs HOG on 13 of 27 sampled
    /// frames of Megamind.avi, Daimler HOG on Grace Hopper's flag and around the astronaut.
    ///
    /// Beside a close-up face (`closeUpFaceHeight` of the picture's height or more), a body
    /// shorter than that face is dropped wherever it is: such a person would be at least 7 times
    /// as far away as the close-up one, and in close-ups the Daimler window fires on hair edges
    /// and dark backdrops across the picture (Megamind.avi: bodies 0.14 to 0.3 of the height beside
    /// faces 0.27 to 0.4 tall on 6 of 27 sampled frames).
    ///
    /// `alsoBeside`: faces known from elsewhere (an earlier round) that drop bodies as these do.
    public func droppingBodiesBesideCloseUps(heightRatio: Double = 1.5, facesAside: Double = 2,
                                             closeUpFaceHeight: Double = 0.25, alsoBeside known: [UnitRect] = []) -> [Observation] {
        let faces = filter { $0.type == .humanFace }.map(\.rect) + known
        guard !faces.isEmpty else { return self }
        return filter { body in
            body.type != .humanBody || !faces.contains { face in
                (face.height >= closeUpFaceHeight && body.rect.height < face.height)
                    || (body.rect.height < heightRatio * face.height
                        && body.rect.midX > face.minX - facesAside * face.width
                        && body.rect.midX < face.maxX + facesAside * face.width)
            }
        }
    }
}
