/// What a detector can see (DockKit's observation types).
public enum ObservationType: String, Sendable, Codable, CaseIterable {
    case humanFace
    case humanBody
    case object
}

/// One thing seen in one frame.
public struct Observation: Sendable, Equatable {
    public var type: ObservationType
    /// Where, in unit coordinates with the origin at the lower-left.
    public var rect: UnitRect
    /// How sure the detector is, 0...1 (each detector maps its native score onto this scale
    /// so that 0.5 is its usual operating point).
    public var confidence: Double

    public init(type: ObservationType, rect: UnitRect, confidence: Double) {
        self.type = type
        self.rect = rect
        self.confidence = confidence
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
}
