import Foundation

/// Orders the subjects of a frame by how much they matter: sets each one's `saliencyRank`
/// (1 = the primary subject). Rankers may remember earlier frames (hysteresis, selection).
public protocol SubjectRanker {
    mutating func rank(_ subjects: inout [TrackedSubject])
}
