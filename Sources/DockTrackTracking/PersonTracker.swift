import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

/// Turns each frame's observations into tracked subjects with stable identities.
public protocol SubjectTracker {
    /// Advances to `time` (seconds, the frame's capture time) and folds in what was detected
    /// in that frame; `observations` is `nil` on frames where no detector ran, and the subjects
    /// then move by their motion model. `image` is the frame, for appearance cues (optional).
    /// Returns the subjects to report for this frame.
    mutating func update(time: Double, observations: [Observation]?, image: Image?) -> [TrackedSubject]
    /// Folds in re-detections of subjects already tracked, made where this tracker predicted
    /// them for the frame of its last ``update(time:observations:image:)``: a sighting moves its
    /// subject's parts and counts as seeing it; no subject is added, none counts as missed.
    /// Returns the subjects to report for that frame, or `nil` when this tracker does not take
    /// re-detections (then the last update's stand).
    mutating func refresh(_ sightings: [SubjectSighting]) -> [TrackedSubject]?
    /// An identifier for a new subject from the tracker's own source, for subjects followed
    /// beside it (objects), so that no two subjects share one.
    mutating func newIdentifier() -> UUID
    /// Forgets every subject (a cut in a film: whoever is in the next shot is seen anew); the
    /// identifiers given so far are not given again.
    mutating func forgetSubjects()
    /// Moves every subject by `shift`, the whole picture's motion since the last frame (the
    /// camera turned or shook), before the next ``update(time:observations:image:)``.
    mutating func follow(_ shift: PictureShift)
    /// The people found once and not yet reported (a new track waits for a second sighting),
    /// where they are predicted at the last update: a re-detector may look for their faces and
    /// bodies; a face found again (``refresh(_:)``) counts as that second sighting, a body found
    /// again by its look only moves the track.
    func candidates() -> [TrackedSubject]
}

/// A subject found again in a frame, near where its tracker predicted it.
public struct SubjectSighting: Sendable, Equatable {
    public var id: UUID
    /// Where the face was found again: its place and size.
    public var face: UnitRect?
    /// Where the body was found again: only its centre is a measurement (a body found by its
    /// look keeps the size it was predicted with).
    public var body: UnitRect?

    public init(id: UUID, face: UnitRect?, body: UnitRect?) {
        self.id = id
        self.face = face
        self.body = body
    }
}

extension SubjectTracker {
    public mutating func refresh(_ sightings: [SubjectSighting]) -> [TrackedSubject]? { nil }
    public mutating func forgetSubjects() {}
    package mutating func follow(_ shift: PictureShift) {}
    public func candidates() -> [TrackedSubject] { [] }

    /// An update without the picture: overlap and motion only.
    public mutating func update(time: Double, observations: [Observation]?) -> [TrackedSubject] {
        update(time: time, observations: observations, image: nil)
    }
}

/// Tracks people: a face and the body below it are one person; association by overlap and
/// motion (a constant-velocity Kalman filter per box), optimal assignment between tracks and
/// detections, a grace period for occlusions and missed detections. Observations of objects
/// (an app's own, in custom tracking) are followed the same way as subjects of their own kind,
/// never joined to a person.
public struct PersonTracker: SubjectTracker {
    public struct Params: Sendable, Equatable {
        /// Detections a new track needs before it is reported (filters one-frame false hits).
        public var hitsToConfirm = 2
        /// The same for a new track seen as a body without a face (`nil`: ``hitsToConfirm``).
        /// Behind a detector that checks its bodies, 1: a person walking in is reported at once.
        /// A new face still waits for a second sighting: faces rank first, and a face seen once
        /// in the background took the reframed window off Megamind.avi's speaker (its centre in
        /// the middle third on 0.899 of the frames, 0.989 waiting).
        public var bodyHitsToConfirm: Int?
        /// Seconds a new track may go undetected before it is dropped unconfirmed.
        public var tentativeGrace = 0.35
        /// Seconds a confirmed track is still reported, at its predicted place, after its last
        /// detection (brief occlusions, missed detections; at least one and a half detection
        /// intervals). Behind a detector that sees everyone in every look, a person it missed
        /// for 0.3 s is hidden or gone: bikes.mp4, false people a frame 0.072 at 0.6 s (people
        /// coasting on after they left), 0.052 at 0.4, 0.040 at 0.3; found 0.946 each.
        public var reportLostFor = 0.3
        /// Seconds a confirmed track is kept for reacquisition after its last detection; after
        /// that the subject is gone.
        public var dropAfter = 4.0
        /// Seconds a confirmed track that a re-detector carried since the detector last found
        /// it is still reported after that detection. A re-detector's sighting (a body found
        /// again by its look, a face by O-Net where it was) moves a track, but is no evidence
        /// that a person is still there: a template matches the clutter it drifted onto on every
        /// frame (on bikes.mp4 a cyclist's look carried on along a fence for 0.6 s after he
        /// left). Past this, the track is kept unreported for reacquisition until ``dropAfter``;
        /// a track nobody carried coasts for ``reportLostFor``. bikes.mp4, false people a frame:
        /// 0.068 at 1 s, 0.064 at 0.4, 0.040 at 0.3 (found: 0.946 each); vtest.avi unchanged.
        /// Counted from the first look that missed it: a track the last look found is reported
        /// however long ago that look was (a look passed over because nothing moved outside the
        /// people found, ``IdlePartSchedule``, is no evidence that they left).
        public var reportUndetectedFor = 0.3
        /// Seconds after which a lost track stops moving by its last velocity.
        public var coastFor = 0.5
        /// Seconds a face or body part is kept without being seen while the other part is.
        public var partGrace = 0.5
        /// The largest cost of a plausible pair (1 - IoU plus a distance term), before appearance.
        public var maximumCost = 1.2
        /// A track unseen for longer than ``lostAfter`` seconds pairs only with a box within
        /// this factor of its height (either way), unless the two overlap: a walker standing
        /// hidden behind others for 2 s on vtest.avi (84 px tall) was taken over by a 31 px one
        /// far behind, who carried their identifier off.
        public var lostHeightRatio = 2.0
        /// Seconds unseen after which a track is held to ``lostHeightRatio``. `eval` over the
        /// five labelled clips, detecting every 2nd to 5th frame: false people a frame fewer or
        /// the same on each (vtest.avi every 3rd 0.040 -> 0.027, vtest-small.mp4 0.037 -> 0.023),
        /// recall the same or higher.
        public var lostAfter = 0.5
        /// A track unseen for longer than ``lostAfter`` whose body was last detected at the left
        /// or right edge (within ``edgeMargin``) pairs only with a body within this factor of
        /// its height, overlapping or not: a person who walked out there comes back at about the
        /// size they left (the same distance from the camera). vtest.avi's walker 2 leaves at the
        /// right edge 99 px tall (the detector's box) and walker 10 walks in there 0.6 s later,
        /// 85 px tall and further away: walker 10 took walker 2's identifier, and walker 2 came
        /// back under a new one.
        public var lostAtSideHeightRatio = 1.25
        /// ... with its feet (the body's bottom) within this share of its height of where they
        /// were: walker 10's are 0.5 of walker 2's height higher in the picture (further away).
        public var lostAtSideFeetShift = 0.45
        /// ... when the picture moved at most this much (a share of it) since: a still camera.
        /// A camera that turned or tilted meanwhile moved the places in the picture (the
        /// panning clip's walkers came back 0.25 to 0.9 of their height higher or lower).
        public var stillPicture = 0.01
        /// A box within this share of the picture of one of its edges touches it.
        public var edgeMargin = 0.02
        /// Weight of the clothing colour difference (Hellinger distance, 0...1) in the cost.
        public var appearanceWeight = 1.5
        /// Two tracks whose bodies overlap this much (intersection over union) are one person,
        /// followed twice, and are merged; so are two whose faces overlap ``sameFaceOverlap``.
        public var sameBodyOverlap = 0.6
        public var sameFaceOverlap = 0.5
        /// Seconds two tracks must look like one person before they are merged.
        public var mergeAfter = 1.0
        /// How fast a track's appearance follows new sightings.
        public var appearanceRate = 0.2
        /// When and how people are told apart by their re-identification signatures (with a
        /// ``PersonTracker/signatures`` reader).
        package var reidentification = ReidentificationParams()
        package var filter = BoxFilter.Params()
        public init() {}
    }

    public let params: Params
    var tracks: [Track] = []
    /// Pairs of tracks that have looked like one person on every detection since a time.
    private var together: [TrackPair: Double] = [:]
    var identifiers: IdentifierSource
    private var time: Double?
    /// When detections last ran, and the time between the last two (detection every Nth frame,
    /// adaptive, or on a worker thread): a track is only "missed" by a detection that ran.
    private var lastDetection: Double?
    private var detectionInterval = 0.0
    /// Reads people's signatures, to tell apart people who met and to know a person seen again
    /// (`nil`: the tracker goes by position, motion and clothing colours alone).
    package var signatures: (any PersonSignatureReader)?
    /// People whose tracks ended lately, who may be seen again.
    var departed: [DepartedPerson] = []
    var nextSerial = 1
    /// CPU seconds spent reading signatures (for the bench).
    package internal(set) var signatureSeconds = 0.0
    /// Signatures read so far, by why (for the bench).
    package internal(set) var signatureReads = SignatureReads()

    public mutating func newIdentifier() -> UUID { identifiers.next() }

    public mutating func forgetSubjects() {
        tracks.removeAll()
        together = [:]
        departed.removeAll()
    }

    public mutating func follow(_ shift: PictureShift) {
        guard shift != .none else { return }
        for i in tracks.indices {
            tracks[i].face?.move(x: shift.x, y: shift.y)
            tracks[i].body?.move(x: shift.x, y: shift.y)
            tracks[i].shiftSinceDetected += hypot(shift.x, shift.y)
        }
    }

    public init(params: Params = Params(), identifiers: IdentifierSource = .random) {
        self.params = params
        self.identifiers = identifiers
    }

    public mutating func update(time now: Double, observations: [Observation]?, image: Image?) -> [TrackedSubject] {
        let dt = time.map { now - $0 } ?? 0
        time = now
        for i in tracks.indices { advance(&tracks[i], by: dt, now: now) }
        if let observations {
            if let lastDetection { detectionInterval = now - lastDetection }
            lastDetection = now
            var people = PersonObservation.group(observations.filter { $0.type != .object })
                + observations.filter { $0.type == .object }.map { PersonObservation(face: nil, body: $0.rect, isObject: true) }
            if let image {
                for i in people.indices { people[i].appearance = people[i].body.flatMap { try? Appearance(of: $0, in: image) } }
                readDoubtfulSignatures(of: &people, at: now, in: image)
            }
            associate(people, at: now)
        }
        let tentativeGrace = stretched(params.tentativeGrace), dropAfter = max(params.dropAfter, stretched(params.reportLostFor))
        let ended = tracks.filter { track in
            track.isConfirmed ? now - track.lastDetected > dropAfter : now - track.lastSeen > tentativeGrace
        }
        if !ended.isEmpty {
            let serials = Set(ended.map(\.serial))
            tracks.removeAll { serials.contains($0.serial) }
            remember(ended, at: now)
        }
        if observations != nil, let image { reidentify(at: now, in: image) }
        return reported(at: now)
    }

    public mutating func refresh(_ sightings: [SubjectSighting]) -> [TrackedSubject]? {
        guard let now = time else { return [] }
        for sighting in sightings {
            guard let i = tracks.firstIndex(where: { $0.id == sighting.id }) else { continue }
            // A new track is confirmed by its face found again, never by a body found by its
            // look alone (a box on the background matches itself on every frame); such a body
            // only follows its person, so that the next detection finds the track where the
            // person walked to (detecting every Nth frame, a walker is far from where they were
            // first seen by then, and would start a new track again and again).
            if !tracks[i].isConfirmed, sighting.face == nil {
                if let body = sighting.body { tracks[i].body?.update(centerOf: body) }
                continue
            }
            let person = PersonObservation(face: sighting.face, body: tracks[i].isConfirmed ? sighting.body : nil)
            guard person.face != nil || person.body != nil else { continue }
            fold(person, into: &tracks[i], at: now, bodySizeMeasured: false)
            forgetStaleParts(of: &tracks[i], at: now)
        }
        return reported(at: now)
    }

    public func candidates() -> [TrackedSubject] {
        guard let now = time else { return [] }
        return tracks.filter { !$0.isConfirmed && $0.kind == .person }.map { subject(of: $0, at: now) }
    }

    /// The confirmed tracks seen recently enough, and detected recently enough, to report at `now`.
    private func reported(at now: Double) -> [TrackedSubject] {
        // A microsecond's slack: frame times are sums of floating-point steps (0.1 x 12 is
        // 1.2000000000000002), and a track due at 0.3 s is not dropped for a rounding error.
        let reportLostFor = stretched(params.reportLostFor) + 1e-6, reportUndetectedFor = stretched(params.reportUndetectedFor) + 1e-6
        return tracks.filter {
            $0.isConfirmed && now - $0.lastSeen <= reportLostFor
                && ($0.lastSeen <= $0.lastDetected || $0.lastDetected == lastDetection || now - $0.lastDetected <= reportUndetectedFor)
                && Self.isInPicture($0.rect)
        }.map { subject(of: $0, at: now) }
    }

    /// Whether at least a third of a box is in the picture: a track predicted out of the frame
    /// (a walker who left it, coasting on) is not reported as a sliver or an empty box at its edge.
    static func isInPicture(_ rect: UnitRect) -> Bool {
        rect.area > 0 && rect.clippedToUnit().area >= rect.area / 2
    }

    /// `track` as a subject at `now`.
    private func subject(of track: Track, at now: Double) -> TrackedSubject {
        TrackedSubject(id: track.id, kind: track.kind, rect: track.rect.clippedToUnit(), faceRect: track.face?.rect.clippedToUnit(),
                       timeInView: now - track.firstSeen, isObserved: track.lastSeen == now,
                       bodyRect: track.body?.rect.clippedToUnit())
    }

    /// A period of `seconds` without a sighting, stretched to at least one and a half detection
    /// intervals: detecting every Nth frame, a track is unseen for N frames by design, and must
    /// neither stop moving, lose a part, nor be dropped before the next detection can come.
    func stretched(_ seconds: Double) -> Double {
        max(seconds, 1.5 * detectionInterval)
    }

    private func advance(_ track: inout Track, by dt: Double, now: Double) {
        track.face?.predict(by: dt)
        track.body?.predict(by: dt)
        if now - track.lastSeen > stretched(params.coastFor) {
            track.face?.stop()
            track.body?.stop()
        }
    }

    private mutating func associate(_ people: [PersonObservation], at now: Double) {
        let costs = tracks.map { track in people.map { cost(track, $0, at: now) } }
        let pairs = Assignment.minimumCost(costs)
        var matched = Set<Int>()
        for (t, p) in pairs {
            matched.insert(p)
            if tracks[t].isConfirmed, tracks[t].kind == .person, now - tracks[t].lastDetected > params.lostAfter,
               let last = tracks[t].detectedBody, last.reachesEdge(within: params.edgeMargin) {
                tracks[t].leftAt = last
            }
            fold(people[p], into: &tracks[t], at: now)
            tracks[t].lastDetected = now
            tracks[t].shiftSinceDetected = 0
        }
        let matchedTracks = pairs.map { tracks[$0.row] }
        for (p, person) in people.enumerated() where !matched.contains(p) {
            // A second box on someone followed already (a detector's box and a larger one over
            // it, a face beside the face it has) starts no subject of its own.
            if !person.isObject, matchedTracks.contains(where: { $0.isConfirmed && isOnePerson($0, person) }) { continue }
            var track = Track(id: identifiers.next(), kind: person.isObject ? .object : .person, firstSeen: now, lastSeen: now, lastDetected: now)
            track.serial = nextSerial
            nextSerial += 1
            track.face = person.face.map { BoxFilter($0, params: params.filter) }
            track.body = person.body.map { BoxFilter($0, params: params.filter) }
            if person.face != nil { track.faceSeen = now }
            if person.body != nil { track.bodySeen = now }
            track.detectedBody = person.body
            track.appearance = person.appearance
            track.isConfirmed = (person.face == nil ? params.bodyHitsToConfirm ?? params.hitsToConfirm : params.hitsToConfirm) <= 1
            tracks.append(track)
        }
        for i in tracks.indices where tracks[i].lastSeen == now { forgetStaleParts(of: &tracks[i], at: now) }
        mergeDuplicates(at: now)
    }

    /// Two subjects on one person become one: the one seen first keeps its identifier and takes
    /// the other's fresher parts. Two tracks are one person when, on every detection for
    /// ``Params/mergeAfter`` seconds, their bodies overlapped by ``Params/sameBodyOverlap``,
    /// their faces by ``Params/sameFaceOverlap``, or one was a face alone where the other's body
    /// has its head (and that body shows no other face). Two people who cross overlap as much,
    /// but not for as long.
    private mutating func mergeDuplicates(at now: Double) {
        var stillTogether: [TrackPair: Double] = [:]
        var merged = false
        for i in tracks.indices where tracks[i].kind == .person {
            for j in tracks.indices where j > i && tracks[j].kind == .person && isSamePerson(tracks[i], tracks[j]) {
                let pair = TrackPair(tracks[i].id, tracks[j].id)
                stillTogether[pair] = together[pair] ?? now
            }
        }
        together = stillTogether
        let mergeAfter = stretched(params.mergeAfter)
        for (pair, since) in together where now - since >= mergeAfter {
            guard let a = tracks.firstIndex(where: { $0.id == pair.first }), let b = tracks.firstIndex(where: { $0.id == pair.second }) else { continue }
            let (keep, drop) = tracks[a].firstSeen <= tracks[b].firstSeen ? (a, b) : (b, a)
            tracks[keep].absorb(tracks[drop])
            tracks.remove(at: drop)
            merged = true
        }
        if merged { together = together.filter { pair, _ in tracks.contains { $0.id == pair.first } && tracks.contains { $0.id == pair.second } } }
    }

    /// Whether `person`, seen beside `track` in one frame, is that track's person seen twice.
    func isOnePerson(_ track: Track, _ person: PersonObservation) -> Bool {
        track.kind == .person && isSamePerson((track.face?.rect, track.body?.rect), (person.face, person.body))
    }

    func isSamePerson(_ a: Track, _ b: Track) -> Bool {
        isSamePerson((a.face?.rect, a.body?.rect), (b.face?.rect, b.body?.rect))
    }

    /// Whether two people's parts (face, body) are one person's: bodies or faces that overlap
    /// enough, or a face alone where a body without a face has its head.
    private func isSamePerson(_ a: (face: UnitRect?, body: UnitRect?), _ b: (face: UnitRect?, body: UnitRect?)) -> Bool {
        if let x = a.body, let y = b.body, x.intersectionOverUnion(y) >= params.sameBodyOverlap { return true }
        if let x = a.face, let y = b.face, x.intersectionOverUnion(y) >= params.sameFaceOverlap { return true }
        func faceOnBody(_ face: (face: UnitRect?, body: UnitRect?), _ body: (face: UnitRect?, body: UnitRect?)) -> Bool {
            guard face.body == nil, body.face == nil, let f = face.face, let b = body.body else { return false }
            return PersonObservation.headFits(f, in: b)
        }
        return faceOnBody(a, b) || faceOnBody(b, a)
    }

    /// A part not seen for a while while the person is seen otherwise is dropped: a face that
    /// turned away keeps the person alive through the body, and the person shows no face until
    /// one is found again (a face kept while a body is followed across the picture stretched
    /// the subject's box from where the face was to where the body went).
    private func forgetStaleParts(of track: inout Track, at now: Double) {
        let partGrace = stretched(params.partGrace)
        if now - track.faceSeen > partGrace { track.face = nil }
        if now - track.bodySeen > partGrace { track.body = nil }
    }

    /// Folds `person` into `track`; without `bodySizeMeasured` only the body's centre counts
    /// (a re-detected body has the size it was predicted with).
    private func fold(_ person: PersonObservation, into track: inout Track, at now: Double, bodySizeMeasured: Bool = true) {
        if let face = person.face {
            if track.face == nil { track.face = BoxFilter(face, params: params.filter) } else { track.face!.update(face) }
            track.faceSeen = now
        }
        if let body = person.body {
            if track.body == nil {
                track.body = BoxFilter(body, params: params.filter)
            } else if bodySizeMeasured {
                track.body!.update(body)
            } else {
                track.body!.update(centerOf: body)
            }
            track.bodySeen = now
            track.detectedBody = body
        }
        if let seen = person.appearance {
            if track.appearance == nil { track.appearance = seen } else { track.appearance!.blend(seen, rate: params.appearanceRate) }
        }
        if let seen = person.signature { track.reading = (seen, now) }
        track.lastSeen = now
        track.hits += 1
        if track.hits >= params.hitsToConfirm { track.isConfirmed = true }
    }

    /// The cost of explaining `person` by `track`: 1 - the best overlap of a shared part, plus
    /// the centre distance in units of the track's size; infinite when they cannot be the same.
    func cost(_ track: Track, _ person: PersonObservation, at now: Double) -> Double {
        guard (track.kind == .object) == person.isObject else { return .infinity }
        var best = Double.infinity
        // Lost tracks may have drifted: the distance allowed grows with the time unseen.
        let slack = 1 + min(2, (now - track.lastSeen) * 2)
        func consider(_ predicted: UnitRect, _ observed: UnitRect, isBody: Bool = false) {
            let overlap = predicted.intersectionOverUnion(observed)
            let scale = max(predicted.width, predicted.height, 0.01)
            let distance = hypot(predicted.midX - observed.midX, predicted.midY - observed.midY) / scale
            guard overlap > 0.05 || distance < slack else { return }
            if now - track.lastSeen > params.lostAfter, overlap <= 0.05, predicted.height > 0, observed.height > 0 {
                let ratio = observed.height / predicted.height
                guard ratio <= params.lostHeightRatio && ratio >= 1 / params.lostHeightRatio else { return }
            }
            if isBody, now - track.lastSeen > params.lostAfter, track.shiftSinceDetected <= params.stillPicture, observed.height > 0,
               predicted.height > 0, let last = track.detectedBody,
               last.reachesSide(within: params.edgeMargin) {
                let ratio = observed.height / predicted.height
                guard ratio <= params.lostAtSideHeightRatio && ratio >= 1 / params.lostAtSideHeightRatio,
                      abs(observed.minY - predicted.minY) <= params.lostAtSideFeetShift * predicted.height else { return }
            }
            best = min(best, (1 - overlap) + 0.25 * min(distance / slack, 2))
        }
        if let f = track.face?.rect, let o = person.face { consider(f, o) }
        if let b = track.body?.rect, let o = person.body { consider(b, o, isBody: true) }
        // Only a face on one side and only a body on the other: the same person when the face
        // sits where this body's head is.
        if best == .infinity, let f = track.face?.rect, let b = person.body, PersonObservation.headFits(f, in: b) { best = 0.8 }
        if best == .infinity, let b = track.body?.rect, let f = person.face, PersonObservation.headFits(f, in: b) { best = 0.8 }
        // Appearance breaks ties between plausible pairs; it never makes a pair plausible or not.
        guard best <= params.maximumCost else { return .infinity }
        if let a = track.appearance, let b = person.appearance { best += params.appearanceWeight * a.distance(to: b) }
        if let a = track.signature, let b = person.signature { best += params.reidentification.signatureWeight * (1 - a.similarity(to: b)) }
        return best
    }
}

/// Two tracks' identifiers, in a fixed order.
struct TrackPair: Hashable {
    let first: UUID
    let second: UUID

    init(_ a: UUID, _ b: UUID) {
        (first, second) = a.uuidString < b.uuidString ? (a, b) : (b, a)
    }
}
