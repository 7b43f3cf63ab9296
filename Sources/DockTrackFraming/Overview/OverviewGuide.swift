import DockTrackCore
import Foundation

/// Joins what the overview camera sees to what the dock's camera sees, frame by frame: a
/// person is one person in both (a subject of the dock's picture and one of the overview's
/// whose directions, through the ``OverviewMapping``, lie within ``matchRadius``); the person
/// the dock follows is kept in the overview's terms, so that when the dock's camera loses them
/// (they walked out of its narrow view, the dock is still turning towards them) the overview
/// still knows where they are and the dock is sent there at once: they are given to the
/// framing controller as a subject outside the picture, whose direction the controller turns to
/// like any other. Once the dock's camera sees them it frames them itself.
package struct OverviewGuide: Sendable {
    package var mapping: OverviewMapping
    /// The camera on the dock.
    package var camera: CameraModel
    /// Radians between a dock subject's direction and an overview subject's within which they
    /// are one person.
    package var matchRadius = 8 * Double.pi / 180
    /// Radians a pair of wholly unlike looks counts farther apart than it is (clothing colours:
    /// two people side by side are told apart by them, however the calibration places them).
    package var unlikeCost = 8 * Double.pi / 180
    /// The dock's limits: a person whose direction lies beyond its ranges is out of reach.
    package var limits: DockLimits
    /// Whether the dock's own ranking picks the person (the overview then finds them again when
    /// the dock's camera loses them), or the person chosen is kept while the overview sees them.
    package var followsDockRanking = true
    /// The overview's identity of the person the dock follows.
    package private(set) var chosen: UUID?
    /// Whether a person chose ``chosen`` (a tap on the overview): followed while the overview
    /// sees them, whatever the dock's own ranking says.
    package private(set) var chosenByHand = false
    /// Where the person followed was last (a dock orientation).
    private var lastDirection: DockOrientation?
    /// The person followed as the overview last observed them (not only predicted them).
    private var lastObserved: TrackedSubject?
    /// The dock camera's identity of the person followed, when it last saw them.
    private var followedInDockPicture: UUID?
    /// When the person followed was lost in the middle of the overview's picture (behind
    /// something, or tracked anew under another identity), while they are looked for near there.
    private var lostSince: Double?
    /// The overview's identity of the person lost, taken back when it tracks them again.
    private var lost: UUID?
    /// Seconds a person lost in the middle of the overview's picture is looked for within
    /// ``refindRadius`` of where they were before someone farther is followed: a person does not
    /// vanish from the middle of a room, and on vtest.avi the dock otherwise crossed the plaza
    /// to a stranger while its person walked behind a sign.
    package var lostPatience = 1.5
    /// Radians from where a lost person was within which someone found is taken for them.
    package var refindRadius = 16 * Double.pi / 180
    /// A person whose box came this near an edge of the overview's picture (a share of it) when
    /// the overview lost them left its sight there: the next person is followed at once.
    package static let edgeMargin = 0.05
    /// For each overview identity matched to a subject of the dock's picture, that subject's identity.
    private var dockIdentity: [UUID: UUID] = [:]
    /// Degrees between the closest pair of people (one in each camera) of each of the last
    /// frames (at most ``disagreementWindow``): what tells that a camera was moved after calibration.
    private var recentDisagreements: [Double] = []
    package static let disagreementWindow = 60
    /// A median disagreement past this many degrees says a camera was moved.
    package static let movedDegrees = 3.0
    /// Radians within which a frame's closest pair counts towards the disagreement.
    static let disagreementRadius = 20 * Double.pi / 180

    package init(mapping: OverviewMapping, camera: CameraModel, limits: DockLimits) {
        self.mapping = mapping
        self.camera = camera
        self.limits = limits
    }

    /// What the overview guide did with a frame.
    package enum Use: String, Sendable {
        /// The dock's camera saw the chosen person (or saw people the overview does not): its own framing.
        case dockCamera
        /// The dock's camera did not see the chosen person: sent by the overview.
        case overview
        /// Neither camera saw anybody.
        case nobody
    }

    /// The direction (dock orientation) of a subject of the dock's picture seen from `pose`.
    package func direction(of subject: TrackedSubject, seenFrom pose: DockOrientation) -> DockOrientation {
        let anchor = FramingController.anchor(of: subject)
        return pose + camera.angles(toward: anchor.x, anchor.y)
    }

    /// The direction of a subject of the overview.
    package func direction(ofOverview subject: TrackedSubject) -> DockOrientation {
        mapping.orientation(toward: FramingController.anchor(of: subject))
    }

    /// The subjects the framing controller gets for a frame the dock's camera took from `pose`:
    /// those it saw (`seen`, ranked), with the chosen person made the primary subject; when the
    /// dock's camera did not see them, they are added where the overview places them (most
    /// often outside the picture). `overview`: the overview's subjects at the same moment, ranked.
    ///
    /// The chosen person is the dock's own primary subject when the overview sees them too
    /// (``followsDockRanking``), else kept while the overview sees them within reach of the dock,
    /// else the person within reach nearest to where they were last (or to where the dock points).
    ///
    /// The person followed hidden in the dock's own picture (behind a sign, or missed by its
    /// detector) stays its primary subject while its tracker still carries them and the overview
    /// does not observe them outside the picture; a person the overview only predicts is placed
    /// where it last observed them. `time`: when the frames were captured (seconds).
    /// `unlike`: how unlike a subject of the dock's picture looks a subject of the overview's
    /// (0 alike ... 1, `nil` unknown): of two people close together, each is paired with the
    /// one who looks like them.
    package mutating func subjects(seen: [TrackedSubject], from pose: DockOrientation,
                                   overview: [TrackedSubject], at time: Double,
                                   unlike: (_ seen: TrackedSubject, _ overview: TrackedSubject) -> Double? = { _, _ in nil })
        -> (subjects: [TrackedSubject], use: Use) {
        let partners = match(seen: seen, from: pose, overview: overview, unlike: unlike)
        // Where each person is: as the dock's camera sees them when it does (the nearer view),
        // else as the overview does.
        func placed(_ person: TrackedSubject) -> DockOrientation {
            if let dockID = partners[person.id], let subject = seen.first(where: { $0.id == dockID }) {
                return direction(of: subject, seenFrom: pose)
            }
            return direction(ofOverview: person)
        }
        let reachable = overview.filter { isReachable(placed($0)) }
        let byRank: (TrackedSubject, TrackedSubject) -> Bool = { ($0.saliencyRank ?? .max) < ($1.saliencyRank ?? .max) }
        if chosenByHand, let current = chosen, !overview.contains(where: { $0.id == current }) { chosenByHand = false }
        if followsDockRanking, !chosenByHand, let primary = seen.min(by: byRank),
           let partner = partners.first(where: { $0.value == primary.id })?.key, reachable.contains(where: { $0.id == partner }) {
            if partner != chosen { followedInDockPicture = nil }
            chosen = partner
        }
        if let current = chosen, let dockID = partners[current] { followedInDockPicture = dockID }
        // The person followed, tracked by the dock's camera but not matched in the overview
        // (hidden from it, or placed apart): the dock's own track is the nearer view while it
        // observes them, or carries them on where the overview does not place them outside its
        // picture (on vtest.avi, someone walking behind a sign in the middle of the dock's
        // picture was placed sliding 20° down it by the overview's box of their legs).
        if let current = chosen, partners[current] == nil, let dockID = followedInDockPicture,
           let own = seen.first(where: { $0.id == dockID }), isReachable(direction(of: own, seenFrom: pose)) {
            // Only a box the overview observes in this frame says they left the picture: its
            // prediction of a box it lost is no better than the dock's.
            let leftPicture = overview.first(where: { $0.id == current && $0.isObserved }).map { !Self.isInPicture(placeInDockPicture($0, from: pose)) } ?? false
            if own.isObserved || !leftPicture {
                lastDirection = direction(of: own, seenFrom: pose)
                return (Self.primary(dockID, in: seen), .dockCamera)
            }
        }
        // People the dock's camera sees and the overview does not place there: its own camera
        // is trusted (a calibration gone stale must not send it to a ghost of the person it sees).
        // Not a track it only carries on from before (not observed in this frame): the person
        // left its picture, and the overview says where they went. Nor someone beyond the
        // dock's reach (walking out of the room past the end of its pan).
        if partners.isEmpty && seen.contains(where: { $0.isObserved && isReachable(direction(of: $0, seenFrom: pose)) }) {
            return (seen, .dockCamera)
        }
        if let current = chosen, !chosenByHand, !reachable.contains(where: { $0.id == current }) {
            // Lost from the middle of the overview's picture (not seen beyond reach, not gone at
            // an edge): looked for near where they were for a while.
            let hidden = !overview.contains(where: { $0.id == current }) && lastObserved.map { $0.id == current && !Self.isAtEdge($0.rect) } == true
            lostSince = hidden ? time : nil
            lost = hidden ? current : nil
            chosen = nil
            followedInDockPicture = nil
        }
        if chosen == nil {
            // The person followed was lost (out of the overview's sight or tracked anew under
            // another identity): the person nearest to where they were last, else to where the
            // dock points; the least travel, and most often the same person found again.
            let from = lastDirection ?? pose
            let looking = lostSince.map { time - $0 < lostPatience } ?? false
            chosen = looking ? reachable.first(where: { $0.id == lost })?.id : nil
            chosen = chosen ?? reachable.filter { !looking || separation(placed($0), from) <= refindRadius }
                .min(by: { separation(placed($0), from) < separation(placed($1), from) })?.id
        }
        guard let chosen, let person = overview.first(where: { $0.id == chosen }) else {
            return (seen, seen.isEmpty ? .nobody : .dockCamera)
        }
        lostSince = nil
        lost = nil
        if person.isObserved { lastObserved = person }
        lastDirection = placed(person)
        if let dockID = partners[chosen] {
            // The dock's camera sees them: they are its primary subject.
            return (Self.primary(dockID, in: seen), .dockCamera)
        }
        // Where the overview last observed them: its prediction of a box it lost is no better
        // (on vtest.avi the box of someone going behind a sign slid on down the plaza).
        let observed = person.isObserved || lastObserved?.id != chosen ? person : lastObserved!
        var placed = placeInDockPicture(observed, from: pose)
        placed.id = dockIdentity[chosen] ?? chosen
        placed.saliencyRank = 0
        placed.isObserved = false
        return ([placed] + seen.filter { $0.id != placed.id }, .overview)
    }

    /// The turn that takes the dock from `pose` to `direction`: the short way round on a dock that
    /// pans without end (its pose after a search or a client's turns may be a turn or more from
    /// the overview's directions), else the way its range allows.
    package func turn(to direction: DockOrientation, from pose: DockOrientation) -> DockOrientation {
        DockOrientation(x: limits.pitch.turn(from: pose.x, to: direction.x), y: limits.yaw.turn(from: pose.y, to: direction.y), z: 0)
    }

    /// Radians between two directions, the way the dock would turn from one to the other.
    func separation(_ a: DockOrientation, _ b: DockOrientation) -> Double {
        let turn = turn(to: b, from: a)
        return hypot(turn.x, turn.y)
    }

    /// `seen` with the subject `id` made the primary one.
    static func primary(_ id: UUID, in seen: [TrackedSubject]) -> [TrackedSubject] {
        seen.map { subject in
            var subject = subject
            if subject.id == id { subject.saliencyRank = 0 }
            return subject
        }
    }

    /// Whether a subject placed in the dock's picture (``placeInDockPicture(_:from:)``) has its
    /// anchor inside it.
    static func isInPicture(_ placed: TrackedSubject) -> Bool {
        let anchor = FramingController.anchor(of: placed)
        return (0...1).contains(anchor.x) && (0...1).contains(anchor.y)
    }

    /// Whether an overview box comes within ``edgeMargin`` of an edge of its picture.
    static func isAtEdge(_ box: UnitRect) -> Bool {
        box.reachesEdge(within: edgeMargin)
    }

    /// Chooses the person of `overview` at `point` of its picture (unit coordinates, upper-left
    /// origin, as a tap): of the boxes holding the point (or within 0.03 of it), the one whose
    /// middle is nearest. Their identity (the dock camera's
    /// when it sees them), or `nil` when nobody is there.
    package mutating func select(at point: (x: Double, y: Double), in overview: [TrackedSubject]) -> UUID? {
        let x = point.x, y = 1 - point.y
        // A tap a little beside a narrow box (a person far away) still counts.
        let reach = 0.03
        guard let person = overview.filter({ $0.rect.minX - reach <= x && x <= $0.rect.maxX + reach && $0.rect.minY - reach <= y && y <= $0.rect.maxY + reach })
            .min(by: { hypot($0.rect.midX - x, $0.rect.midY - y) < hypot($1.rect.midX - x, $1.rect.midY - y) }) else { return nil }
        chosen = person.id
        chosenByHand = true
        followedInDockPicture = dockIdentity[person.id]
        lostSince = nil
        lost = nil
        return dockIdentity[person.id] ?? person.id
    }

    /// Back to the dock's own ranking.
    package mutating func forgetChoice() {
        chosenByHand = false
    }

    /// Whether the dock can point at `direction` closely enough to bring it into the target
    /// zone (a sixth of the view's width, a fifth of its height, beyond its ranges at most).
    package func isReachable(_ direction: DockOrientation) -> Bool {
        let clamped = limits.clamp(direction)
        return abs(clamped.y - direction.y) <= camera.horizontalFieldOfView / 6 && abs(clamped.x - direction.x) <= camera.verticalFieldOfView / 5
    }

    /// The median degrees between where the two cameras placed the same people lately; `nil`
    /// until ``disagreementWindow`` frames with people in both were seen.
    package var disagreement: Double? {
        guard recentDisagreements.count >= Self.disagreementWindow else { return nil }
        return recentDisagreements.sorted()[recentDisagreements.count / 2]
    }

    /// Pairs each overview subject with the nearest subject of the dock's picture within
    /// ``matchRadius`` (nearest pairs first, a pair that looks unlike counted up to
    /// ``unlikeCost`` farther); overview identity to dock identity.
    private mutating func match(seen: [TrackedSubject], from pose: DockOrientation, overview: [TrackedSubject],
                                unlike: (TrackedSubject, TrackedSubject) -> Double?) -> [UUID: UUID] {
        var candidates: [(cost: Double, overview: UUID, dock: UUID)] = []
        var nearest = Double.infinity
        for subject in seen {
            let a = direction(of: subject, seenFrom: pose)
            for other in overview {
                let distance = separation(a, direction(ofOverview: other))
                nearest = min(nearest, distance)
                if distance <= matchRadius {
                    let look = unlike(subject, other).map { min(max($0, 0), 1) } ?? 0
                    candidates.append((distance + unlikeCost * (look.isFinite ? look : 0), other.id, subject.id))
                }
            }
        }
        // The closest pair of the frame: with the calibration right, someone both cameras see is
        // placed alike; a camera moved since shows as a steady distance even for the closest
        // pair, within the match radius or beyond it.
        if nearest <= Self.disagreementRadius { recentDisagreements.append(nearest * 180 / .pi) }
        var partners: [UUID: UUID] = [:], taken = Set<UUID>()
        for candidate in candidates.sorted(by: { $0.cost < $1.cost })
        where partners[candidate.overview] == nil && !taken.contains(candidate.dock) {
            partners[candidate.overview] = candidate.dock
            taken.insert(candidate.dock)
        }
        if recentDisagreements.count > Self.disagreementWindow { recentDisagreements.removeFirst(recentDisagreements.count - Self.disagreementWindow) }
        for (overviewID, dockID) in partners { dockIdentity[overviewID] = dockID }
        // Identities the overview no longer tracks are forgotten.
        let present = Set(overview.map(\.id))
        dockIdentity = dockIdentity.filter { present.contains($0.key) }
        return partners
    }

    /// An overview subject as the dock's camera at `pose` would see it: its box's corners
    /// turned into directions and those into the dock's picture (unit coordinates, beyond 0...1
    /// outside it).
    package func placeInDockPicture(_ subject: TrackedSubject, from pose: DockOrientation) -> TrackedSubject {
        // The turn to the box's middle (the short way round on an endless pan: never the seam
        // between two corners of one person behind the dock), each corner on the same side of
        // it, all kept in front of the camera: a person behind the dock is placed beyond the
        // edge it turns to.
        func place(_ rect: UnitRect) -> UnitRect {
            let middle = mapping.orientation(toward: (rect.midX, rect.midY))
            let toMiddle = turn(to: middle, from: pose)
            func seen(_ corner: (Double, Double)) -> (x: Double, y: Double) {
                let turn = toMiddle + (mapping.orientation(toward: corner) - middle)
                let farthest = CameraModel.farthestAngle
                return camera.point(at: DockOrientation(x: min(max(turn.x, -farthest), farthest), y: min(max(turn.y, -farthest), farthest), z: 0))
            }
            let low = seen((rect.minX, rect.minY))
            let high = seen((rect.maxX, rect.maxY))
            return UnitRect(x: min(low.x, high.x), y: min(low.y, high.y), width: abs(high.x - low.x), height: abs(high.y - low.y))
        }
        var placed = subject
        placed.rect = place(subject.rect)
        placed.faceRect = subject.faceRect.map(place)
        placed.bodyRect = subject.bodyRect.map(place)
        return placed
    }
}
