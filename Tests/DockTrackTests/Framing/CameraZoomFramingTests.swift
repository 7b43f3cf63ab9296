import DockTrack
import Foundation
import Testing

/// Zoom as part of framing for a camera that zooms itself: what it asks for, and the camera and
/// turns the controller aims with at each zoom.
@Suite(.onTestThreads) struct CameraZoomFramingTests {
    static let widest = CropWindow(sourceSize: ImageSize(width: 1280, height: 720), aspect: 16.0 / 9, fieldOfView: 60 * .pi / 180, maximumZoom: 4)

    /// A person whose face is `faceHeight` of the picture's height, at its centre.
    static func person(faceHeight: Double) -> TrackedSubject {
        let face = UnitRect(x: 0.5 - faceHeight * 9 / 32, y: 0.5, width: faceHeight * 9 / 16, height: faceHeight)
        return TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: face.x, y: 0.1, width: face.width, height: 0.5),
                              faceRect: face, saliencyRank: 1)
    }

    @Test func aFaceIsZoomedToHeadAndShouldersOnceAndNotFurther() throws {
        var zoom = CameraZoomFraming(widest: Self.widest, digital: true)
        // The first request takes the camera's zoom as it is.
        #expect(zoom.request(subjects: [Self.person(faceHeight: 0.1)], mode: .automatic, magnification: 1, now: 0) == nil)
        // A face a tenth of the widest picture: head and shoulders (3.5 faces) in 0.8 of it.
        let asked = zoom.request(subjects: [Self.person(faceHeight: 0.1)], mode: .automatic, magnification: 1, now: 1.5)
        let wanted = try #require(asked)
        #expect(abs(wanted - 0.8 / 0.35) < 0.01, "\(wanted)")
        // At that zoom the same face fills more of the picture: the camera is where it should be,
        // nothing more is asked (a camera that saw the face grow and zoomed on would run away).
        for t in stride(from: 3.0, to: 10, by: 1) {
            #expect(zoom.request(subjects: [Self.person(faceHeight: 0.1 * wanted)], mode: .automatic, magnification: wanted, now: t) == nil)
        }
    }

    @Test func aGroupIsFramedWiderThanOnePerson() throws {
        func asked(_ subjects: [TrackedSubject]) -> Double? {
            var zoom = CameraZoomFraming(widest: Self.widest, digital: false)
            _ = zoom.request(subjects: subjects, mode: .automatic, magnification: 1, now: 0)
            return zoom.request(subjects: subjects, mode: .automatic, magnification: 1, now: 2)
        }
        let one = Self.person(faceHeight: 0.08)
        var other = Self.person(faceHeight: 0.08)
        other.saliencyRank = 2
        other.faceRect!.x += 0.4
        other.rect.x += 0.4
        let alone = try #require(asked([one])), together = try #require(asked([one, other]))
        #expect(together < alone * 0.7, "one \(alone), two \(together)")
    }

    @Test func withNobodyTheZoomHoldsThenWidensAndNeverRunsOn() throws {
        var zoom = CameraZoomFraming(widest: Self.widest, digital: false)
        #expect(zoom.request(subjects: [], mode: .automatic, magnification: 2.5, now: 10) == nil)
        // Held for widenAfter (4 s) from the start, as after a lost face...
        for t in [11.0, 12.5, 13.9] { #expect(zoom.request(subjects: [], mode: .automatic, magnification: 2.5, now: t) == nil) }
        // ...then out to the widest, once.
        #expect(zoom.request(subjects: [], mode: .automatic, magnification: 2.5, now: 14.5) == 1)
        for t in [15.0, 17.0, 30.0] { #expect(zoom.request(subjects: [], mode: .automatic, magnification: 1, now: t) == nil) }
        // Times and magnifications that are no numbers ask for nothing.
        #expect(zoom.request(subjects: [Self.person(faceHeight: 0.1)], mode: .automatic, magnification: .nan, now: .nan) == nil)
    }

    @Test func theCameraAndItsTurnsFollowTheZoom() {
        let digital = CameraZoomFraming(widest: Self.widest, digital: true)
        let optical = CameraZoomFraming(widest: Self.widest, digital: false)
        let sixty = 60 * Double.pi / 180
        #expect(abs(digital.camera(at: 2).horizontalFieldOfView - sixty / 2) < 1e-9)
        #expect(abs(optical.camera(at: 2).horizontalFieldOfView - 2 * atan(tan(sixty / 2) / 2)) < 1e-9)
        #expect(abs(optical.camera(at: 1).horizontalFieldOfView - sixty) < 1e-9)
        // A digital PTZ turns only as far as its window can go: not at all at the widest, a
        // quarter of the picture's field of view each way at 2 times.
        let base = DockLimits.standard
        #expect(digital.limits(at: 1, from: base).yaw.range == 0...0)
        #expect(abs(digital.limits(at: 2, from: base).yaw.range.upperBound - sixty / 4) < 1e-9)
        #expect(digital.limits(at: 2, from: base).yaw.maximumSpeed == base.yaw.maximumSpeed)
        #expect(optical.limits(at: 3, from: base) == base)
        // Past the largest magnification, or no number: within 1...4.
        #expect(abs(digital.camera(at: 100).horizontalFieldOfView - sixty / 4) < 1e-9)
        #expect(abs(digital.camera(at: .nan).horizontalFieldOfView - sixty) < 1e-9)
    }

    @Test func subjectsAreTakenBackToTheWidestPicture() {
        let seen = Self.person(faceHeight: 0.3)
        let wide = CameraZoomFraming.widened([seen], from: 3)[0]
        #expect(abs(wide.faceRect!.height - 0.1) < 1e-12 && abs(wide.rect.height - 0.5 / 3) < 1e-12)
        #expect(abs(wide.faceRect!.midX - 0.5) < 1e-12, "about the centre")
        for odd in [Double.infinity, -2, .nan] {
            let rect = CameraZoomFraming.widened([seen], from: odd)[0].rect
            #expect(abs(rect.y - seen.rect.y) < 1e-12 && abs(rect.height - seen.rect.height) < 1e-12, "\(odd): as seen")
        }
    }
}
