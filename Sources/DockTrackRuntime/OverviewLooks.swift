import DockTrackCore
import DockTrackFraming
import DockTrackMedia
import DockTrackTracking
import Foundation

extension OverviewGuide {
    /// The subjects to frame: those the dock's camera `seen` from `pose` in `picture`, joined
    /// with the overview's people in `overviewPicture` (each paired with the one who looks like
    /// them, ``OverviewLooks``). The one way `track` and `simulate` guide the dock by an overview.
    mutating func subjects(seen: [TrackedSubject], in picture: Image, from pose: DockOrientation, overview: [TrackedSubject],
                           in overviewPicture: Image, at time: Double) -> (subjects: [TrackedSubject], use: Use) {
        let looks = OverviewLooks(seen: seen, in: picture, overview: overview, in: overviewPicture)
        return subjects(seen: seen, from: pose, overview: overview, at: time, unlike: looks.unlike)
    }
}

/// How people look in the dock's picture and in the overview's: the clothing colours of each
/// body (``Appearance``) in its own camera's picture, so that ``OverviewGuide`` pairs each of
/// two people standing close together with the one who looks like them.
struct OverviewLooks {
    private var looks: [UUID: Appearance] = [:]

    /// The looks of the people of `seen` in the dock camera's `picture` and of `overview` in
    /// the overview's `overviewPicture`; a box wholly outside its picture (a person the tracker
    /// carries on past its edge) has none.
    init(seen: [TrackedSubject], in picture: Image, overview: [TrackedSubject], in overviewPicture: Image) {
        for (subjects, image) in [(seen, picture), (overview, overviewPicture)] {
            for subject in subjects where subject.kind == .person {
                let body = (subject.bodyRect ?? subject.rect).clippedToUnit()
                guard body.width > 0, body.height > 0 else { continue }
                looks[subject.id] = try? Appearance(of: body, in: image)
            }
        }
    }

    /// How unlike two people look (0 alike ... 1), `nil` when either has no look.
    func unlike(_ one: TrackedSubject, _ other: TrackedSubject) -> Double? {
        guard let a = looks[one.id], let b = looks[other.id] else { return nil }
        return a.distance(to: b)
    }
}
