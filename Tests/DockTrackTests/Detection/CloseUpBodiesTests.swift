import DockTrack
import Testing

/// Whole-body detectors fire on pieces of a close-up person (hair, a shoulder, an arm) and on
/// the backdrop behind them; bodies that small beside a face found with them are dropped. A
/// person network boxes the close-up person, around their face: one person.
@Suite(.onTestThreads) struct CloseUpBodiesTests {
    static func face(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> Observation {
        Observation(type: .humanFace, rect: UnitRect(x: x, y: y, width: w, height: h), confidence: 0.99)
    }
    static func body(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> Observation {
        Observation(type: .humanBody, rect: UnitRect(x: x, y: y, width: w, height: h), confidence: 0.8)
    }

    @Test func aSmallBodyBesideACloseUpFaceIsDropped() {
        // Megamind.avi frame 40 (lower-left origin): her face, her hair and her arm as bodies,
        // and a small real face in the background.
        let close = Self.face(0.32, 0.36, 0.17, 0.32), far = Self.face(0.63, 0.5, 0.1, 0.16)
        let hair = Self.body(0.45, 0.58, 0.09, 0.32), arm = Self.body(0.49, 0.15, 0.07, 0.25)
        #expect([close, far, hair, arm].droppingBodiesBesideCloseUps() == [close, far])
    }

    /// Megamind.avi frame 100 as the default's Daimler window sees it: a close-up face and three
    /// narrow bodies on the other person's hair and the dark backdrop, far aside.
    @Test func bodiesShorterThanACloseUpFaceAreDroppedAnywhere() {
        let close = Self.face(0.58, 0.44, 0.19, 0.35)
        let hair = Self.body(0.17, 0.56, 0.05, 0.18), backdrop = Self.body(0.18, 0.26, 0.04, 0.14), edge = Self.body(0.09, 0.82, 0.04, 0.15)
        #expect([close, hair, backdrop, edge].droppingBodiesBesideCloseUps() == [close])
        // Beside a face that is no close-up (a tenth of the height), a far body is a person.
        let small = Self.face(0.58, 0.44, 0.06, 0.1), far = Self.body(0.17, 0.56, 0.04, 0.09)
        #expect([small, far].droppingBodiesBesideCloseUps() == [small, far])
        // A body as tall as the close-up face or taller, far aside: someone nearer the camera.
        let tall = Self.body(0.05, 0.1, 0.12, 0.4)
        #expect([close, tall].droppingBodiesBesideCloseUps() == [close, tall])
    }

    @Test func bodiesThatCanBePeopleAreKept() {
        let face = Self.face(0.4, 0.6, 0.05, 0.08)
        // As tall as 1.5 faces or more: a person at most 4.7 times as far as the face.
        let standing = Self.body(0.45, 0.1, 0.08, 0.5), small = Self.body(0.47, 0.1, 0.03, 0.11)
        #expect([face, standing].droppingBodiesBesideCloseUps() == [face, standing])
        #expect([face, small].droppingBodiesBesideCloseUps() == [face])
        // Farther aside than 2 face widths, or with no face at all.
        let aside = Self.body(0.56, 0.1, 0.03, 0.11)
        #expect([face, aside].droppingBodiesBesideCloseUps() == [face, aside])
        #expect([small, aside].droppingBodiesBesideCloseUps() == [small, aside])
    }

    /// Every 10th frame of Megamind.avi (an animated trailer: close-ups at a restaurant table):
    /// a HOG body detector alone fires on about half of them (hair, backdrops); the default's
    /// person network boxes the close-up people themselves, each body around a face found with
    /// it (one person: ``PersonObservation/group(_:)`` pairs them), and no body stands alone.
    @Test func megamindsCloseUpsGetNoStrayBodies() throws {
        var source = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        var frames: [Frame] = []
        try FrameSelection(stride: 10).forEachFrame(of: &source) { frames.append($0) }
        let detector = try DetectorCatalog.make("default", models: Fixtures.models)
        let bodies = try HOGPeopleDetector()
        var withStrayBodies = 0, withBodiesAlone = 0, withFaces = 0
        for frame in frames {
            let found = try detector.detect(in: frame.image, minimumConfidence: 0.5)
            if PersonObservation.group(found).contains(where: { $0.face == nil && $0.body != nil }) { withStrayBodies += 1 }
            if found.contains(where: { $0.type == .humanFace }) { withFaces += 1 }
            if try !bodies.detect(in: frame.image, minimumConfidence: 0.5).isEmpty { withBodiesAlone += 1 }
        }
        #expect(frames.count == 27)
        #expect(withBodiesAlone >= 10, "hog-body alone: bodies on \(withBodiesAlone) frames")
        #expect(withStrayBodies <= 2, "default: bodies with no face on \(withStrayBodies) of \(frames.count) frames")
        #expect(withFaces >= 24, "default: faces on \(withFaces) frames")

        // Scheduled as the pipeline runs it, the face part runs every round it finds faces.
        let schedule = IdlePartSchedule(detector)
        for frame in frames { _ = try schedule.detect(in: frame.image, minimumConfidence: 0.5) }
        #expect(schedule.runs[0] >= 25, "runs of faces, bodies: \(schedule.runs)")
    }

    /// The Daimler window of HOG sees bodies around the astronaut (and, in colour, one in
    /// Grace Hopper's flag); `fast` finds each portrait's one person: the face, and at most one
    /// body, around that face.
    @Test(arguments: ["grace_hopper_512x512.jpg", "astronaut.png"])
    func portraitsGetTheirFaceAndOnePerson(file: String) throws {
        let image = try Image(contentsOf: Fixtures.sample(file))
        let alone = try HOGPeopleDetector(params: .fast).detect(in: image, minimumConfidence: 0.5)
        let found = try DetectorCatalog.make("fast", models: Fixtures.models).detect(in: image, minimumConfidence: 0.5)
        if file == "astronaut.png" { #expect(!alone.isEmpty, "hog-body-fast alone") }
        #expect(found.filter { $0.type == .humanFace }.count == 1, "\(file): \(found)")
        #expect(found.filter { $0.type == .humanBody }.count <= 1, "\(file): \(found)")
        let people = PersonObservation.group(found)
        #expect(people.count == 1 && people.first?.face != nil, "\(file): one person, \(people)")
    }
}
