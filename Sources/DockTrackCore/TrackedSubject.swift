import Foundation

/// A subject the tracker follows across frames, as DockKit reports it.
public struct TrackedSubject: Sendable, Equatable, Identifiable {
    public enum Kind: String, Sendable, Codable {
        case person
        case object
    }

    /// Stable across frames while the subject is tracked.
    public var id: UUID
    public var kind: Kind
    /// Where, in unit coordinates with the origin at the lower-left: for a person the union
    /// of face and body as far as they are known.
    public var rect: UnitRect
    /// The face of a person, when it is seen.
    public var faceRect: UnitRect?
    /// The body of a person, when it is seen (for re-detection between detections; not reported).
    public var bodyRect: UnitRect?
    /// 1 is the most salient subject; `nil` until ranked.
    public var saliencyRank: Int?
    /// How sure it is that this person is speaking, 0...1; `nil` for objects and people whose
    /// face is not seen.
    public var speakingConfidence: Double?
    /// How sure it is that this person looks at the camera, 0...1; `nil` as above.
    public var lookingAtCameraConfidence: Double?
    /// Seconds since the subject was first seen.
    public var timeInView: Double
    /// Whether the subject was observed in this frame (not only predicted by its motion).
    public var isObserved: Bool

    /// DockKit's `rect`, for an app ported from it: upper-left origin, and for a person the face
    /// (DockKit's `TrackedPerson.rect` is the face's box), the person's whole box while their
    /// face is not seen; an object's box.
    public var dockKitRect: UnitRect {
        (kind == .person ? faceRect ?? rect : rect).upperLeftOrigin
    }

    public init(id: UUID, kind: Kind, rect: UnitRect, faceRect: UnitRect? = nil, saliencyRank: Int? = nil,
                speakingConfidence: Double? = nil, lookingAtCameraConfidence: Double? = nil,
                timeInView: Double = 0, isObserved: Bool = true, bodyRect: UnitRect? = nil) {
        self.id = id
        self.kind = kind
        self.rect = rect
        self.faceRect = faceRect
        self.bodyRect = bodyRect
        self.saliencyRank = saliencyRank
        self.speakingConfidence = speakingConfidence
        self.lookingAtCameraConfidence = lookingAtCameraConfidence
        self.timeInView = timeInView
        self.isObserved = isObserved
    }
}

/// Makes identifiers for new subjects: random UUIDs, or a counting sequence in tests so that
/// runs compare equal.
public struct IdentifierSource: Sendable {
    private var counter: UInt64 = 0
    private let sequential: Bool

    /// Random version-4 UUIDs.
    public static var random: IdentifierSource { IdentifierSource(sequential: false) }
    /// 00000000-0000-0000-0000-000000000001, ...002, ...
    public static var sequential: IdentifierSource { IdentifierSource(sequential: true) }

    private init(sequential: Bool) { self.sequential = sequential }

    public mutating func next() -> UUID {
        counter += 1
        guard sequential else { return Self.randomUUID() }
        let hex = String(counter, radix: 16)
        let padded = String(repeating: "0", count: 12 - hex.count) + hex
        return UUID(uuidString: "00000000-0000-0000-0000-\(padded)")!
    }

    /// A version-4 UUID from the system's generator (getrandom, no file to open): Foundation's
    /// UUID() gave the same identifier twice once the process had run out of descriptors.
    static func randomUUID() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
