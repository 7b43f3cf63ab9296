import DockTrackCore
import Foundation

/// Why a subject selection failed.
package enum SelectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nobody is at the point (unit coordinates, upper-left origin).
    case noSubjectFound(x: Double, y: Double)

    package var description: String {
        switch self {
        case .noSubjectFound(let x, let y):
            return String(format: "no subject found at (%.3f, %.3f)", x, y)
        }
    }
}

/// Ranks subjects by saliency (1 = most salient) from size, position, speaking, looking at the
/// camera and time in view, with hysteresis: a subject overtakes the one ranked just above it
/// only when its score is higher by a margin. Subjects the caller selected rank first, in the
/// order selected, while they are in view.
package struct SaliencyRanker: SubjectRanker, Sendable {
    package struct Params: Sendable, Equatable {
        package var sizeWeight = 0.35
        package var centralityWeight = 0.2
        package var speakingWeight = 0.25
        package var lookingWeight = 0.15
        package var timeInViewWeight = 0.05
        /// Added for a person whose face is seen: a face is the surest sign of a person, and a
        /// faceless body (someone turned away, or a thing the body detector and its check both
        /// took for a person) gives way to someone showing their face, however large the body.
        package var faceWeight = 0.25
        /// Seconds in view after which the time term is full.
        package var timeInViewSaturation = 3.0
        /// A subject must score this much more than the one ranked above it to overtake it.
        package var hysteresis = 0.08
        /// Taken off the score of a subject not seen in this frame (moved by its motion model
        /// alone): one that was lost (left the picture, a cut in a film) gives way to one in
        /// sight, past the hysteresis.
        package var unobservedPenalty = 0.15
        public init() {}
    }

    package let params: Params
    /// The order of the last ranking (most salient first).
    private var order: [UUID] = []
    /// Identifiers the caller selected, in order; empty for automatic ranking.
    package private(set) var selection: [UUID] = []

    package init(params: Params = Params()) {
        self.params = params
    }

    /// The saliency score of a subject, 0...1 (less the penalty when it is not seen).
    package func score(_ subject: TrackedSubject) -> Double {
        let size = min(1, (subject.rect.area).squareRoot() / 0.5)
        let offCenter = hypot(subject.rect.midX - 0.5, subject.rect.midY - 0.5) / 0.7071
        let time = min(1, subject.timeInView / params.timeInViewSaturation)
        return params.sizeWeight * size + params.centralityWeight * (1 - offCenter)
            + params.speakingWeight * (subject.speakingConfidence ?? 0)
            + params.lookingWeight * (subject.lookingAtCameraConfidence ?? 0)
            + params.timeInViewWeight * time
            + (subject.kind == .person && subject.faceRect != nil ? params.faceWeight : 0)
            - (subject.isObserved ? 0 : params.unobservedPenalty)
    }

    /// Sets `saliencyRank` of every subject.
    package mutating func rank(_ subjects: inout [TrackedSubject]) {
        // Identifiers are unique by construction (IdentifierSource); should two ever collide
        // (a caller's own custom-tracking identifiers), the better score counts, never a trap.
        let scores = Dictionary(subjects.map { ($0.id, score($0)) }, uniquingKeysWith: max)
        // Start from the previous order (subjects still in view), newcomers placed by score.
        var ranked = order.filter { scores[$0] != nil }
        for id in subjects.map(\.id) where !ranked.contains(id) {
            let index = ranked.firstIndex { scores[$0]! < scores[id]! } ?? ranked.count
            ranked.insert(id, at: index)
        }
        // Adjacent swaps only past the hysteresis margin, until stable.
        var swapped = true
        while swapped {
            swapped = false
            for i in 0..<max(0, ranked.count - 1) where scores[ranked[i + 1]]! > scores[ranked[i]]! + params.hysteresis {
                ranked.swapAt(i, i + 1)
                swapped = true
            }
        }
        let selected = selection.filter { scores[$0] != nil }
        ranked = selected + ranked.filter { !selected.contains($0) }
        order = ranked
        for i in subjects.indices {
            subjects[i].saliencyRank = ranked.firstIndex(of: subjects[i].id).map { $0 + 1 }
        }
    }

    /// Selects the subject at `point` (unit coordinates, origin upper-left, as a tap on the
    /// picture): the smallest subject containing it. Throws when nobody is there.
    @discardableResult
    package mutating func selectSubject(atX x: Double, y: Double, in subjects: [TrackedSubject]) throws(SelectionError) -> UUID {
        let point = UnitPoint(upperLeftOriginX: x, y: y)
        let hits = subjects.filter { $0.rect.contains(x: point.x, y: point.y) }
        guard let subject = hits.min(by: { $0.rect.area < $1.rect.area }) else { throw .noSubjectFound(x: x, y: y) }
        selection = [subject.id]
        return subject.id
    }

    /// Selects these subjects, most important first.
    package mutating func selectSubjects(_ identifiers: [UUID]) {
        selection = identifiers
    }

    /// Back to automatic ranking.
    package mutating func clearSelection() {
        selection = []
    }
}
