import DockTrackCore
import DockTrackDetection
import Foundation

extension PersonTracker {
    /// One person being followed.
    struct Track {
        /// The person's identifier: re-identification may hand it to another track (two people
        /// who crossed, a person seen again under a new track).
        var id: UUID
        /// The track's own number, which never changes hands.
        var serial = 0
        var kind = TrackedSubject.Kind.person
        var face: BoxFilter?
        var body: BoxFilter?
        var faceSeen: Double = -.infinity
        var bodySeen: Double = -.infinity
        /// The body's box as the detector last found it (not moved by prediction since).
        var detectedBody: UnitRect?
        var firstSeen: Double
        /// When the track was last seen by any means: detected, or found again by a re-detector.
        var lastSeen: Double
        /// When the detector last found it: a re-detector's sighting moves a track but is not
        /// this (O-Net, looking for a face where one was, found it in the sky for 1.4 s after the
        /// cyclist of bikes.mp4 had left the picture).
        var lastDetected: Double
        var hits = 1
        var isConfirmed = false
        var appearance: Appearance?
        /// What the person looks like to the re-identification network, and when it was last read.
        var signature: PersonSignature?
        var signedAt = -Double.infinity
        /// The serials of the tracks this one's body met since its signature was last read.
        var company: Set<Int> = []
        /// The signature read off the body it was last matched with, and when.
        var reading: (signature: PersonSignature, time: Double)?
        /// Where its person's body was last detected before the track, lost there at an edge of the
        /// picture, was paired with a body again: that body may be someone else walking in where
        /// its person walked out, and is read once clear of the edge (``ReidentificationParams/returnSimilarity``).
        var leftAt: UnitRect?
        /// How far the picture moved (the camera turned: the sum of ``PictureShift``s, a share
        /// of the picture) since the detector last found the track.
        var shiftSinceDetected = 0.0

        /// Takes `other`'s parts where they were seen more lately, and its sightings (the same
        /// person, followed twice).
        mutating func absorb(_ other: Track) {
            if other.faceSeen > faceSeen || face == nil, let part = other.face { face = part; faceSeen = other.faceSeen }
            if other.bodySeen > bodySeen || body == nil, let part = other.body {
                body = part
                bodySeen = other.bodySeen
                detectedBody = other.detectedBody ?? detectedBody
            }
            lastSeen = max(lastSeen, other.lastSeen)
            lastDetected = max(lastDetected, other.lastDetected)
            hits += other.hits
            isConfirmed = isConfirmed || other.isConfirmed
            if appearance == nil { appearance = other.appearance }
            if signature == nil { signature = other.signature; signedAt = other.signedAt }
            company.formUnion(other.company)
        }

        var rect: UnitRect {
            switch (face?.rect, body?.rect) {
            case let (f?, b?): return f.union(b)
            case let (f?, nil): return f
            case let (nil, b?): return b
            case (nil, nil): return UnitRect(x: 0, y: 0, width: 0, height: 0)
            }
        }
    }
}
