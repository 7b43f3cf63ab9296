import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

/// When ``PersonTracker`` reads people's signatures and how it weighs them.
///
/// Signatures are read on detection frames only, from bodies the detector just found, tall
/// enough and clear of everyone else (a crop with two people in it is nobody's signature), and
/// only where they decide something: a person who met someone (their boxes overlapped: the
/// tracks may have swapped people), a track with no signature yet (a newcomer, who may be
/// someone seen before), and now and then a refresh. Each read costs about 2.5 ms on one core
/// (crop and network, bf16; ``SignatureReads`` counts them for the bench).
package struct ReidentificationParams: Sendable, Equatable {
    /// Bodies shorter than this (pixels) are not read: the network's 256-px-tall input
    /// stretched from a handful of pixels says little. `eval` identityKept on vtest-small.mp4
    /// (walkers 14 to 57 px): 0.869 at 60 px, 0.873 at 40, 0.958 at 30 and 25, 0.932 at 20;
    /// vtest.avi 0.929 from 20 to 40, the panning clip 0.726 at 60, 0.841 from 20 to 40.
    package var smallestBody = 30.0
    /// Two bodies meet when their overlap is this share of the smaller one.
    package var meetingOverlap = 0.2
    /// A body is read only when no other person's box covers more than this share of it.
    package var clearOverlap = 0.1
    /// A signature is read again after this many seconds (a person turns, the light changes).
    package var refreshAfter = 3.0
    /// The most signatures read on one detection frame; the rest wait for the next.
    package var mostReadsPerLook = 3
    /// A track takes another identity when the body it follows is this much more like that
    /// identity's signature than like its own (cosine similarity).
    package var takeOverMargin = 0.15
    /// ... and at least this like it.
    package var leastSimilarity = 0.5
    /// A track read for the first time takes the identity of someone lost or gone when it is at
    /// least this like them, and this much more than like anyone else lost or gone: the same
    /// person 5 s apart scores 0.70 on vtest.avi (median), two people 0.26 (the highest 0.70).
    package var claimSimilarity = 0.6
    package var claimMargin = 0.05
    /// ... or this like them when it is found where they were last seen (within
    /// ``nearbyHeights`` of their body's height): someone who stood hidden behind others and
    /// walks on. vtest.avi's walker 2 stands 8 s half hidden, and walking on scored 0.51
    /// against their own signature (a new identifier at 0.6).
    package var claimNearbySimilarity = 0.45
    package var nearbyHeights = 1.5
    /// Weight of (1 - signature similarity) in the cost of pairing a track with a body whose
    /// signature was read (bodies near more than one track, or tracks near more than one body):
    /// the same person 1 s apart scores 0.82 (median), two people 0.26.
    package var signatureWeight = 3.0
    /// The most bodies read on one detection frame because the tracks they could belong to are
    /// in doubt.
    package var mostDoubtfulReads = 4
    /// A pairing is in doubt when the next best is within this much of the best (the cost of
    /// overlap and distance, before clothing colours and signatures).
    package var doubtMargin = 0.3
    /// How far a new reading moves a signature (a running mean). Every reading is blended in:
    /// a first one from a poor crop would otherwise stay the track's signature for good.
    package var blendRate = 0.3
    /// A track lost for over ``PersonTracker/Params/lostAfter`` at an edge of the picture (its
    /// body last detected within ``PersonTracker/Params/edgeMargin`` of it) and paired again
    /// keeps its identity only when the body, read once clear of the edges, is at least this
    /// like its signature; else the body is someone new (or someone else seen again) and the
    /// identity waits among the people gone for its person to come back. On the panning clip
    /// (people leave and re-enter the view as it pans) two such pairings read 0.21 and 0.27
    /// and were other people; the same people read 0.46 to 0.83.
    package var returnSimilarity = 0.3
    /// ... unless the body, or the person's where they left, is taller than this share of the
    /// picture: a close-up's crop (head and chest) reads unlike the same person's whole body
    /// (bikes.mp4's man, who left at the right edge 0.96 of the picture tall and was found
    /// again 0.41 tall, read 0.24; walking back in front of the camera, 0.31).
    package var returnTallest = 0.5
    /// People gone this long (seconds) are not looked for any more.
    package var rememberFor = 20.0
    /// The most people gone that are remembered (the oldest are forgotten first).
    package var mostRemembered = 64
    package init() {}
}

/// How many signatures were read, by why.
package struct SignatureReads: Sendable, Equatable {
    /// Tracks that met someone (their people may have swapped).
    package var met = 0
    /// Tracks with no signature yet.
    package var new = 0
    /// Tracks lost at an edge and paired again (``ReidentificationParams/returnSimilarity``).
    package var returned = 0
    /// Signatures read again after ``ReidentificationParams/refreshAfter``.
    package var refreshed = 0
    /// Bodies more than one track could explain.
    package var doubtful = 0
    package var total: Int { met + new + returned + refreshed + doubtful }
}

/// A person whose track ended, with what they looked like: a track read for the first time,
/// or one that met theirs, may be them.
struct DepartedPerson {
    var id: UUID
    var serial: Int
    var firstSeen: Double
    var signature: PersonSignature
    var departedAt: Double
    /// Where the detector last found their body.
    var lastBody: UnitRect?
}

extension PersonTracker {
    /// Remembers the people of `ended` tracks that had a signature.
    mutating func remember(_ ended: [Track], at now: Double) {
        for track in ended where track.isConfirmed && track.kind == .person {
            guard let signature = track.signature else { continue }
            departed.append(DepartedPerson(id: track.id, serial: track.serial, firstSeen: track.firstSeen, signature: signature, departedAt: now,
                                           lastBody: track.detectedBody))
        }
        forgetLongDeparted(at: now)
    }

    private mutating func forgetLongDeparted(at now: Double) {
        let p = params.reidentification
        departed.removeAll { now - $0.departedAt > p.rememberFor }
        if departed.count > p.mostRemembered { departed.removeFirst(departed.count - p.mostRemembered) }
    }

    /// On a detection frame: notes who met whom, reads the signatures that decide something,
    /// and hands identities to the tracks that follow their people.
    mutating func reidentify(at now: Double, in image: Image) {
        guard let reader = signatures else { return }
        let p = params.reidentification
        forgetLongDeparted(at: now)
        let recent = stretched(params.reportLostFor) + 1e-6
        let people = tracks.indices.filter { tracks[$0].kind == .person && tracks[$0].body != nil && now - tracks[$0].lastSeen <= recent }
        for (n, a) in people.enumerated() where tracks[a].isConfirmed {
            for b in people[(n + 1)...] where tracks[b].isConfirmed {
                guard let x = tracks[a].body?.rect, let y = tracks[b].body?.rect, x.intersectionOverSmaller(y) >= p.meetingOverlap else { continue }
                tracks[a].company.insert(tracks[b].serial)
                tracks[b].company.insert(tracks[a].serial)
            }
        }
        var wanted: [(index: Int, priority: Int)] = []
        for i in people where tracks[i].isConfirmed && tracks[i].lastDetected == now && tracks[i].bodySeen == now {
            guard let body = tracks[i].body?.rect, body.height * Double(image.size.height) >= p.smallestBody,
                  body.clippedToUnit().area >= 0.9 * body.area else { continue }
            let covered = people.contains { j in
                j != i && (tracks[j].body.map { body.intersectionArea(with: $0.rect) > p.clearOverlap * body.area } ?? false)
            }
            if covered { continue }
            let track = tracks[i]
            if !track.company.isEmpty { wanted.append((i, 0)) }
            else if track.leftAt != nil && track.signature != nil && !body.reachesEdge(within: params.edgeMargin) { wanted.append((i, 1)) }
            else if track.signature == nil { wanted.append((i, 2)) }
            else if now - track.signedAt >= p.refreshAfter { wanted.append((i, 3)) }
        }
        let chosenReads = wanted.sorted { ($0.priority, tracks[$0.index].signedAt) < ($1.priority, tracks[$1.index].signedAt) }
            .prefix(p.mostReadsPerLook)
        let chosen = chosenReads.map(\.index)
        var readings: [Int: PersonSignature] = [:]
        for (i, priority) in chosenReads {
            if let reading = tracks[i].reading, reading.time == now {
                readings[i] = reading.signature
                continue
            }
            guard let body = tracks[i].body?.rect else { continue }
            switch priority {
            case 0: signatureReads.met += 1
            case 1: signatureReads.returned += 1
            case 2: signatureReads.new += 1
            default: signatureReads.refreshed += 1
            }
            let started = ThreadCPUClock.now()
            readings[i] = try? reader.signature(of: body, in: image)
            signatureSeconds += ThreadCPUClock.now() - started
        }
        for i in chosen { if let seen = readings[i] { settle(i, seen: seen, readings: readings, at: now, in: image.size) } }
    }

    /// Reads the signatures of the bodies in `people` that more than one track with a signature
    /// could explain, or that could explain a track another body could explain too: where
    /// position and motion alone may pair people with the wrong tracks (two walkers crossing,
    /// one behind the other).
    mutating func readDoubtfulSignatures(of people: inout [PersonObservation], at now: Double, in image: Image) {
        guard let reader = signatures else { return }
        let p = params.reidentification
        let signed = tracks.indices.filter { tracks[$0].kind == .person && tracks[$0].signature != nil }
        guard !signed.isEmpty else { return }
        let costs = signed.map { t in people.indices.map { people[$0].isObject || people[$0].body == nil ? Double.infinity : cost(tracks[t], people[$0], at: now) } }
        /// Whether the two lowest of `values` are both finite and within the doubt margin.
        func closeCall(_ values: [Double]) -> Bool {
            let finite = values.filter(\.isFinite).sorted()
            return finite.count > 1 && finite[1] - finite[0] < p.doubtMargin
        }
        var doubtful: [Int] = []
        for person in people.indices {
            guard let body = people[person].body, body.height * Double(image.size.height) >= p.smallestBody,
                  signed.indices.contains(where: { costs[$0][person].isFinite }) else { continue }
            // Two tracks about as likely for this body, or a track of it about as likely
            // for another body.
            if closeCall(signed.indices.map { costs[$0][person] })
                || signed.indices.contains(where: { t in costs[t][person].isFinite && closeCall(costs[t]) }) {
                doubtful.append(person)
            }
        }
        for person in doubtful.prefix(p.mostDoubtfulReads) {
            guard let body = people[person].body else { continue }
            signatureReads.doubtful += 1
            let started = ThreadCPUClock.now()
            people[person].signature = try? reader.signature(of: body, in: image)
            signatureSeconds += ThreadCPUClock.now() - started
        }
    }

    /// Someone track `i`'s person may be instead of who it says.
    private enum Rival {
        case track(Int)
        case departed(Int)
    }

    /// Decides who track `i` follows from `seen`, the signature just read off its body: its own
    /// identity, the identity of a track it met (the two swapped people), or of someone lost or
    /// gone (a person seen again); then folds the reading into that identity's signature.
    /// `readings`: every signature read on this frame, by track.
    private mutating func settle(_ i: Int, seen: PersonSignature, readings: [Int: PersonSignature], at now: Double, in size: ImageSize) {
        let p = params.reidentification
        // Read clear of the edges (a body the edge cuts reads unlike its person), the body a
        // track lost at an edge was paired with again is its person, or someone else.
        if let left = tracks[i].leftAt, let body = tracks[i].detectedBody, !body.reachesEdge(within: params.edgeMargin) {
            tracks[i].leftAt = nil
            if max(body.height, left.height) <= p.returnTallest, let signature = tracks[i].signature, seen.similarity(to: signature) < p.returnSimilarity {
                releaseIdentity(of: i, leftAt: left, at: now)
            }
        }
        let track = tracks[i]
        let own = track.signature.map { seen.similarity(to: $0) }
        // Each identity it could take, with how much more alike the people and signatures would
        // be (gain) and whether that is enough.
        var rivals: [(rival: Rival, similarity: Double, gain: Double)] = []
        var unmatched: [(rival: Rival, similarity: Double)] = []
        for (j, other) in tracks.enumerated() where j != i && other.kind == .person && other.isConfirmed {
            guard let signature = other.signature else { continue }
            let similarity = seen.similarity(to: signature)
            if other.lastDetected == now {
                // Found now too: two people. Their identities are exchanged only when they met,
                // both were read now, and the exchange fits both readings better
                // (A new track may have taken over from a track that jumped to someone else
                // at its birth, before any meeting was seen: it is compared with every track
                // read now.)
                guard track.company.contains(other.serial) || track.signature == nil, let theirs = readings[j] else { continue }
                let kept = (own ?? 0) + theirs.similarity(to: signature)
                let exchanged = similarity + (track.signature.map { theirs.similarity(to: $0) } ?? 0)
                if exchanged - kept >= p.takeOverMargin && similarity >= p.leastSimilarity {
                    rivals.append((.track(j), similarity, exchanged - kept))
                }
            } else if track.company.contains(other.serial) || track.signature == nil {
                // Lost now: the person this track follows may be theirs.
                unmatched.append((.track(j), similarity))
            }
        }
        for (k, person) in departed.enumerated() where track.signature == nil || track.company.contains(person.serial) {
            unmatched.append((.departed(k), seen.similarity(to: person.signature)))
        }
        let ranked = unmatched.sorted { $0.similarity > $1.similarity }
        if let best = ranked.first {
            if let own {
                if best.similarity >= own + p.takeOverMargin && best.similarity >= p.leastSimilarity {
                    rivals.append((best.rival, best.similarity, best.similarity - own))
                }
            } else {
                var least = p.claimSimilarity
                if case .departed(let k) = best.rival, let body = track.detectedBody, let last = departed[k].lastBody,
                   Self.isNearby(body, last, heights: p.nearbyHeights, in: size) {
                    least = p.claimNearbySimilarity
                }
                if best.similarity >= least && best.similarity - (ranked.dropFirst().first?.similarity ?? -1) >= p.claimMargin {
                    rivals.append((best.rival, best.similarity, best.similarity - least))
                }
            }
        }
        if let best = rivals.max(by: { $0.gain < $1.gain }) {
            switch best.rival {
            case .track(let j): swapIdentities(i, j)
            case .departed(let k): takeIdentity(of: k, into: i, at: now)
            }
        }
        tracks[i].company = []
        tracks[i].signedAt = now
        if tracks[i].signature != nil {
            tracks[i].signature!.blend(seen, rate: p.blendRate)
        } else {
            tracks[i].signature = seen
        }
    }

    /// Whether `body`'s centre is within `heights` of `last`'s height from `last`'s centre (in
    /// pixels of a picture of `size`).
    static func isNearby(_ body: UnitRect, _ last: UnitRect, heights: Double, in size: ImageSize) -> Bool {
        let width = Double(size.width), height = Double(size.height)
        let dx = (body.midX - last.midX) * width, dy = (body.midY - last.midY) * height
        return (dx * dx + dy * dy).squareRoot() <= heights * last.height * height
    }

    /// Tracks `i` and `j` exchange who they are (identifier, signature, first sighting): each
    /// follows the other's person.
    private mutating func swapIdentities(_ i: Int, _ j: Int) {
        func identity(_ t: Track) -> (UUID, PersonSignature?, Double, Double, Appearance?) { (t.id, t.signature, t.signedAt, t.firstSeen, t.appearance) }
        let a = identity(tracks[i]), b = identity(tracks[j])
        (tracks[i].id, tracks[i].signature, tracks[i].signedAt, tracks[i].firstSeen, tracks[i].appearance) = b
        (tracks[j].id, tracks[j].signature, tracks[j].signedAt, tracks[j].firstSeen, tracks[j].appearance) = a
        tracks[j].company.remove(tracks[i].serial)
    }

    /// Track `i` follows someone other than its person, who walked out at `leftAt`: the identity
    /// is remembered among the people gone, and the track starts anew under a new identifier.
    private mutating func releaseIdentity(of i: Int, leftAt: UnitRect, at now: Double) {
        let track = tracks[i]
        if let signature = track.signature {
            departed.append(DepartedPerson(id: track.id, serial: track.serial, firstSeen: track.firstSeen, signature: signature, departedAt: now,
                                           lastBody: leftAt))
        }
        tracks[i].id = identifiers.next()
        tracks[i].serial = nextSerial
        nextSerial += 1
        tracks[i].firstSeen = now
        tracks[i].signature = nil
        tracks[i].signedAt = -.infinity
        tracks[i].company = []
    }

    /// Track `i` becomes departed person `k` seen again; the identity it had is remembered in
    /// turn when it had a signature.
    private mutating func takeIdentity(of k: Int, into i: Int, at now: Double) {
        let person = departed.remove(at: k)
        let track = tracks[i]
        if let signature = track.signature {
            departed.append(DepartedPerson(id: track.id, serial: track.serial, firstSeen: track.firstSeen, signature: signature, departedAt: now,
                                           lastBody: track.detectedBody))
        }
        tracks[i].id = person.id
        tracks[i].firstSeen = min(track.firstSeen, person.firstSeen)
        tracks[i].signature = person.signature
    }
}
