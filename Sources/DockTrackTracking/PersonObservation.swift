import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

/// The observations that belong to one person in one frame: a face, a body, or both.
public struct PersonObservation: Sendable, Equatable {
    public var face: UnitRect?
    public var body: UnitRect?
    /// The clothing colours of the body, when the picture was at hand.
    package var appearance: Appearance?
    /// The body's re-identification signature, read when the tracks it could belong to were in
    /// doubt.
    package var signature: PersonSignature?
    /// An object, not a person: its box is in `body`.
    public var isObject = false

    /// Whether `face` is where the head of `body` is: horizontally inside it, in its top part,
    /// and narrower than it. The top part is the top 35% of a whole standing person (7 to 9
    /// faces tall), and the top 60% of a body under 4 faces tall: a person close to the camera,
    /// seen from the chest or the waist up (a person network boxes what is in the picture;
    /// carphone's man is a body 2.1 faces tall whose face's middle is 40% down it).
    public static func headFits(_ face: UnitRect, in body: UnitRect) -> Bool {
        let headZone = body.height < 4 * face.height ? 0.6 : 0.35
        return face.midX > body.minX && face.midX < body.maxX
            && face.midY > body.maxY - headZone * body.height && face.midY < body.maxY + 0.15 * body.height
            && face.width < body.width * 1.2
    }

    /// Pairs each body with the face that sits best where its head is; what is left over
    /// stands alone.
    public static func group(_ observations: [Observation]) -> [PersonObservation] {
        let faces = observations.filter { $0.type == .humanFace }.map(\.rect)
        let bodies = observations.filter { $0.type == .humanBody }.map(\.rect)
        let costs = bodies.map { body in
            faces.map { face -> Double in
                guard headFits(face, in: body) else { return .infinity }
                let head = (x: body.midX, y: body.maxY - 0.1 * body.height)
                return hypot(face.midX - head.x, face.midY - head.y) / body.height
            }
        }
        let pairs = Assignment.minimumCost(costs)
        var people = pairs.map { PersonObservation(face: faces[$0.column], body: bodies[$0.row]) }
        let pairedFaces = Set(pairs.map(\.column)), pairedBodies = Set(pairs.map(\.row))
        people += faces.indices.filter { !pairedFaces.contains($0) }.map { PersonObservation(face: faces[$0], body: nil) }
        people += bodies.indices.filter { !pairedBodies.contains($0) }.map { PersonObservation(face: nil, body: bodies[$0]) }
        return people
    }
}
