import DockTrack
import Foundation
import Testing

/// Re-detection between detections (O-Net on each predicted face) on real pictures: a camera
/// sweeping fast past a portrait, where the face's true place in every view is known.
@Suite struct RedetectionTests {
    /// grace_hopper_512x512.jpg seen through a 300 px window that swings left and right (1.2 s
    /// period, up to 11 px a frame) and up and down (0.9 s), at 30 frames a second, each view
    /// 240x240; and where the face is in each view (the default detector's box on the whole
    /// picture, moved: the same box shape the tracked face has).
    static func sweep(frames count: Int) throws -> (frames: [Frame], faces: [UnitRect]) {
        let picture = try Image(contentsOf: Fixtures.sample("grace_hopper_512x512.jpg"))
        let found = try DetectorCatalog.make("default", models: Fixtures.models).detect(in: picture, minimumConfidence: 0.5)
        let face = try #require(found.first { $0.type == .humanFace }).rect.pixelRect(in: picture.size)
        let side = 300.0, out = ImageSize(width: 240, height: 240), factor = Double(out.width) / side
        var frames: [Frame] = [], faces: [UnitRect] = []
        for k in 0..<count {
            let t = Double(k) / 30
            let view = PixelRect(x: 115 + 60 * sin(2 * .pi * t / 1.2), y: 58 + 40 * sin(2 * .pi * t / 0.9), width: side, height: side)
            frames.append(Frame(index: k, time: t, image: try picture.cropped(to: view, size: out)))
            let moved = PixelRect(x: (face.x - view.x) * factor, y: (face.y - view.y) * factor,
                                  width: face.width * factor, height: face.height * factor)
            faces.append(UnitRect(moved, in: out))
        }
        return (frames, faces)
    }

    /// How well the tracked face covers the true one on each frame (0 when none is reported).
    static func overlaps(every: Int, redetection: Bool, _ sweep: (frames: [Frame], faces: [UnitRect])) throws -> (overlaps: [Double], pipeline: TrackingPipeline) {
        var params = TrackingPipeline.Params()
        params.detectEvery = every
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make("default", models: Fixtures.models), cues: nil,
                                        params: params, identifiers: .sequential)
        if redetection { pipeline.redetector = try FaceRedetector(models: Fixtures.models) }
        var overlaps: [Double] = []
        for (frame, truth) in zip(sweep.frames, sweep.faces) {
            let face = try pipeline.process(frame).first?.faceRect
            overlaps.append(face.map { $0.intersectionOverUnion(truth) } ?? 0)
        }
        return (overlaps, pipeline)
    }

    @Test func theFaceBoxStaysOnAFaceSweptPastBetweenDetections() throws {
        let sweep = try Self.sweep(frames: 90)
        // Reported from the second detection on (a person is confirmed by two).
        let settled = 9..<90
        let plain = try Self.overlaps(every: 8, redetection: false, sweep).overlaps[settled]
        let (found, pipeline) = try Self.overlaps(every: 8, redetection: true, sweep)
        let redetected = found[settled]
        func mean(_ values: ArraySlice<Double>) -> Double { values.reduce(0, +) / Double(values.count) }
        print(String(format: "sweep, detect every 8: face IoU mean %.3f min %.3f without re-detection, mean %.3f min %.3f with (%d re-detections)",
                     mean(plain), plain.min()!, mean(redetected), redetected.min()!, pipeline.redetections))
        #expect(pipeline.redetections >= 60, "the face is found again on most frames between detections")
        #expect(redetected.min()! >= 0.5, "the box stays on the face on every frame: \(redetected.map { Int($0 * 100) })")
        #expect(mean(redetected) >= mean(plain) + 0.05, "\(mean(redetected)) vs \(mean(plain)) by the motion model alone")
    }
}

/// Re-detections folded into the person tracker, and the placement arithmetic, on made-up boxes.
@Suite struct RefreshTests {
    static func face(x: Double) -> Observation {
        Observation(type: .humanFace, rect: UnitRect(x: x, y: 0.5, width: 0.1, height: 0.12), confidence: 0.9)
    }

    @Test func aSightingMovesItsSubjectAndAddsNoOne() {
        var tracker = PersonTracker(identifiers: .sequential)
        _ = tracker.update(time: 0, observations: [Self.face(x: 0.3)])
        let confirmed = tracker.update(time: 0.1, observations: [Self.face(x: 0.3)])
        let id = try! #require(confirmed.first?.id)
        let predicted = tracker.update(time: 0.2, observations: nil)
        #expect(predicted.first?.isObserved == false)
        let moved = UnitRect(x: 0.36, y: 0.5, width: 0.1, height: 0.12)
        let stranger = SubjectSighting(id: UUID(), face: UnitRect(x: 0.7, y: 0.2, width: 0.1, height: 0.1), body: nil)
        let refreshed = tracker.refresh([SubjectSighting(id: id, face: moved, body: nil), stranger])
        #expect(refreshed?.count == 1, "a sighting of no tracked subject adds none")
        let subject = try! #require(refreshed?.first)
        #expect(subject.id == id && subject.isObserved)
        #expect(subject.faceRect!.midX > 0.36, "the face moved towards where it was found again: \(subject.faceRect!)")
        // A detection that misses the face later still counts from the sighting, not before it.
        let later = tracker.update(time: 0.5, observations: [])
        #expect(later.first?.id == id)
    }

    @Test func aPlacementMovesABoxByHowFarTheFaceMovedFromItsReference() {
        let box = UnitRect(x: 0.4, y: 0.4, width: 0.2, height: 0.2)
        // The re-detector's own convention: a smaller box a bit lower than the detector's.
        let reference = FacePlacement(UnitRect(x: 0.43, y: 0.38, width: 0.14, height: 0.14), relativeTo: box)
        #expect(reference.applied(to: box, from: reference) == box, "no motion, no change")
        // The same convention on a face that moved right by a quarter of the box and grew by 10%.
        let seen = FacePlacement(UnitRect(x: 0.43 + 0.05 - 0.007, y: 0.38 - 0.007, width: 0.154, height: 0.154), relativeTo: box)
        let moved = seen.applied(to: box, from: reference)
        #expect(abs(moved.midX - 0.55) < 1e-9 && abs(moved.midY - 0.5) < 1e-9, "\(moved)")
        #expect(abs(moved.width - 0.22) < 1e-9 && abs(moved.height - 0.22) < 1e-9, "\(moved)")
    }
}

/// Objects among an app's observations are subjects of their own: never joined to a person.
@Suite struct ObservedObjectTests {
    @Test func anObjectBesideAPersonKeepsItsOwnIdentityAndKind() {
        var tracker = PersonTracker(identifiers: .sequential)
        let face = Observation(type: .humanFace, rect: UnitRect(x: 0.3, y: 0.5, width: 0.1, height: 0.12), confidence: 0.9)
        var subjects: [TrackedSubject] = []
        for k in 0..<10 {
            // The object sits where the person's face is, then moves right.
            let object = Observation(type: .object, rect: UnitRect(x: 0.3 + 0.02 * Double(k), y: 0.5, width: 0.1, height: 0.12), confidence: 0.9)
            subjects = tracker.update(time: Double(k) / 10, observations: [face, object])
        }
        #expect(subjects.count == 2)
        #expect(Set(subjects.map(\.kind)) == [.person, .object])
        let object = subjects.first { $0.kind == .object }
        #expect(object?.faceRect == nil && abs((object?.rect.midX ?? 0) - 0.53) < 0.03, "\(String(describing: object))")
        #expect(Set(subjects.map(\.id)).count == 2)
    }
}
