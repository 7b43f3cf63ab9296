import DockTrack
import Foundation
import Testing

/// Re-detection between detections (O-Net on each predicted face) on real pictures: a camera
/// sweeping fast past a portrait, where the face's true place in every view is known.
@Suite(.onTestThreads) struct RedetectionTests {
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
    static func overlaps(every: Int, redetection: Bool, followsCamera: Bool = false, _ sweep: (frames: [Frame], faces: [UnitRect])) throws -> (overlaps: [Double], pipeline: TrackingPipeline) {
        var params = TrackingPipeline.Params()
        params.detectEvery = every
        params.followsCameraMotion = followsCamera
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
        // Following the picture's own motion (as `track` does) does as much without a look at
        // the face, and both together no worse.
        let following = try Self.overlaps(every: 8, redetection: false, followsCamera: true, sweep).overlaps[settled]
        let both = try Self.overlaps(every: 8, redetection: true, followsCamera: true, sweep).overlaps[settled]
        print(String(format: "sweep, detect every 8, following the camera: face IoU mean %.3f min %.3f, with re-detection %.3f min %.3f",
                     mean(following), following.min()!, mean(both), both.min()!))
        #expect(mean(following) >= mean(plain) + 0.05 && mean(both) >= mean(redetected) - 0.03, "\(mean(following)), \(mean(both))")
        #expect(both.min()! >= 0.5)
    }
}

/// Re-detections folded into the person tracker, and the placement arithmetic, on made-up boxes.
@Suite(.onTestThreads) struct RefreshTests {
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

    /// A template match finds where a body is, not how big: its sighting carries the predicted
    /// size. Folding that in as a measurement confirmed the size's velocity (two detections of a
    /// body 10% apart in height) on every frame, and the box shrank to a pixel or grew to a
    /// third of the picture between detections 24 frames apart (vtest.avi).
    @Test func aBodyFoundAgainByItsLookKeepsItsSize() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        func body(x: Double, height: Double) -> UnitRect { UnitRect(x: x, y: 0.3, width: height * 0.4, height: height) }
        _ = tracker.update(time: 0, observations: [Observation(type: .humanBody, rect: body(x: 0.3, height: 0.15), confidence: 0.9)])
        let confirmed = tracker.update(time: 0.4, observations: [Observation(type: .humanBody, rect: body(x: 0.31, height: 0.12), confidence: 0.9)])
        let id = try #require(confirmed.first?.id)
        var sizes: [Double] = []
        for k in 1...14 {
            // 25 frames a second: the 14 frames are within the 0.6 s (one and a half detection
            // intervals) a subject carried by its look is reported undetected.
            let predicted = try #require(tracker.update(time: 0.4 + Double(k) * 0.04, observations: nil).first?.bodyRect)
            // Found again where predicted, a little to the right (the person walks); its size as given.
            let found = UnitRect(x: predicted.x + 0.004, y: predicted.y, width: predicted.width, height: predicted.height)
            let refreshed = try #require(tracker.refresh([SubjectSighting(id: id, face: nil, body: found)])?.first)
            sizes.append(try #require(refreshed.bodyRect).height)
        }
        #expect(sizes.allSatisfy { $0 > 0.11 && $0 < 0.16 }, "between the detected heights: \(sizes.map { String(format: "%.3f", $0) })")
        let last = try #require(tracker.update(time: 0.98, observations: nil).first?.bodyRect)
        #expect(last.midX > 0.31 + 0.024 + 0.04, "the centre follows the sightings: \(last)")
    }

    /// Tracks end when their evidence ends: a body found again by its look on every frame (a
    /// template matches the clutter it drifted onto as well as a person) keeps a subject reported
    /// for one and a half detection intervals (0.6 s when the detector runs every 0.4 s) after
    /// the detector last found it, not longer; the detector finding it again brings it back
    /// with its identifier.
    @Test func aSubjectFollowedOnlyByItsLookIsReportedBriefly() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        let body = UnitRect(x: 0.4, y: 0.3, width: 0.06, height: 0.15)
        let detected = tracker.update(time: 0, observations: [Observation(type: .humanBody, rect: body, confidence: 0.9)])
        _ = tracker.update(time: 0.4, observations: [Observation(type: .humanBody, rect: body, confidence: 0.9)])
        let id = try #require(detected.first?.id ?? tracker.update(time: 0.4, observations: nil).first?.id)
        var lastReported = 0.4
        for k in 5...30 {
            let time = Double(k) * 0.1
            // The detector runs every 0.4 s and finds no one; the look finds the box every frame.
            _ = tracker.update(time: time, observations: k % 4 == 0 ? [] : nil)
            let refreshed = tracker.refresh([SubjectSighting(id: id, face: nil, body: body)]) ?? []
            if refreshed.contains(where: { $0.id == id }) { lastReported = time }
        }
        #expect(abs(lastReported - 1.0) < 0.05, "reported until 0.6 s after the last detection at 0.4 s: \(lastReported)")
        let back = tracker.update(time: 3.2, observations: [Observation(type: .humanBody, rect: body, confidence: 0.9)])
        #expect(back.map(\.id) == [id], "found again by the detector within the 4 s kept: the same subject")
    }

    /// A face not found for the part grace while the body is followed is no longer shown, and
    /// no longer stretches the subject's box from where it was to where the body went.
    @Test func aFaceNotSeenAgainIsDroppedWhileTheBodyIsFollowed() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        func body(_ x: Double) -> UnitRect { UnitRect(x: x, y: 0.2, width: 0.1, height: 0.4) }
        let face = UnitRect(x: 0.425, y: 0.52, width: 0.05, height: 0.06)
        let seen = [Observation(type: .humanFace, rect: face, confidence: 0.9), Observation(type: .humanBody, rect: body(0.4), confidence: 0.9)]
        _ = tracker.update(time: 0, observations: seen)
        let id = try #require(tracker.update(time: 0.1, observations: seen).first?.id)
        var last: TrackedSubject?
        for k in 2...9 {
            // The detector finds the body, not the face, every other frame; its look between.
            let bodyOnly = [Observation(type: .humanBody, rect: body(0.4 + 0.03 * Double(k)), confidence: 0.9)]
            _ = tracker.update(time: Double(k) * 0.1, observations: k % 2 == 0 ? bodyOnly : nil)
            last = tracker.refresh([SubjectSighting(id: id, face: nil, body: body(0.4 + 0.03 * Double(k)))])?.first
        }
        let subject = try #require(last)
        #expect(subject.faceRect == nil, "the face was last seen 0.8 s ago: \(subject)")
        #expect(subject.rect.width < 0.11, "the box is the body's, not the body's and the old face's: \(subject.rect)")
    }

    /// A person found once waits for a second sighting before being reported: a face found
    /// again where it is predicted is one (no waiting for the next detection, many frames away
    /// when detection is sparse); a body found by its look alone is not (a box on the background
    /// matches itself on every frame).
    @Test func aNewFaceFoundAgainIsConfirmedANewBodyFoundByItsLookIsNot() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        let body = UnitRect(x: 0.6, y: 0.2, width: 0.1, height: 0.3)
        #expect(tracker.update(time: 0, observations: [Self.face(x: 0.3), Observation(type: .humanBody, rect: body, confidence: 0.9)]).isEmpty)
        _ = tracker.update(time: 0.04, observations: nil)
        let candidates = tracker.candidates()
        #expect(candidates.count == 2, "both new tracks are candidates: \(candidates)")
        let face = try #require(candidates.first?.faceRect)
        #expect(abs(face.midX - 0.35) < 0.01)
        // Sequential identifiers: the lone face's track is the first, the lone body's the second.
        #expect(candidates[0].id == UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        let bodyTrack = try #require(UUID(uuidString: "00000000-0000-0000-0000-000000000002"))
        let refreshed = tracker.refresh([SubjectSighting(id: candidates[0].id, face: face, body: nil),
                                         SubjectSighting(id: bodyTrack, face: nil, body: body)])
        #expect(refreshed?.map(\.id) == [candidates[0].id], "the face is confirmed, the body is not: \(refreshed ?? [])")
        #expect(tracker.candidates().map(\.id) == [bodyTrack], "the body's track is still waiting")
    }

    /// A walker found once, with detection every 16th frame: by the next detection they are
    /// more than three of their heights away from where they were first seen, too far to be
    /// taken for the same person. Followed by their look between (not confirmed by it), the
    /// new track is where they are, and the next detection confirms it.
    @Test func aNewBodyFollowedByItsLookIsConfirmedByTheNextDetection() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        func body(_ x: Double) -> UnitRect { UnitRect(x: x, y: 0.3, width: 0.025, height: 0.06) }
        _ = tracker.update(time: -1.6, observations: [])  // detection runs every 1.6 s
        #expect(tracker.update(time: 0, observations: [Observation(type: .humanBody, rect: body(0.2), confidence: 0.9)]).isEmpty)
        for k in 1..<16 {
            _ = tracker.update(time: Double(k) * 0.1, observations: nil)
            let candidate = try #require(tracker.candidates().first, "frame \(k): the new track is kept until the next detection")
            #expect(tracker.refresh([SubjectSighting(id: candidate.id, face: nil, body: body(0.2 + 0.012 * Double(k)))])?.isEmpty == true,
                    "a body found by its look confirms no one")
        }
        let confirmed = tracker.update(time: 1.6, observations: [Observation(type: .humanBody, rect: body(0.2 + 0.012 * 16), confidence: 0.9)])
        #expect(confirmed.map(\.id) == [UUID(uuidString: "00000000-0000-0000-0000-000000000001")], "\(confirmed)")
    }

    /// At a cut in a film everyone is forgotten: the next shot's people are new subjects.
    @Test func forgottenSubjectsComeBackWithNewIdentities() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        _ = tracker.update(time: 0, observations: [Self.face(x: 0.3)])
        let before = try #require(tracker.update(time: 0.1, observations: [Self.face(x: 0.3)]).first?.id)
        tracker.forgetSubjects()
        #expect(tracker.update(time: 0.2, observations: nil).isEmpty)
        _ = tracker.update(time: 0.3, observations: [Self.face(x: 0.31)])
        let after = try #require(tracker.update(time: 0.4, observations: [Self.face(x: 0.31)]).first?.id)
        #expect(after != before)
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
@Suite(.onTestThreads) struct ObservedObjectTests {
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

/// Body re-detection between detections (a template match per tracked body) on real pedestrians:
/// a camera sweeping past a still frame of vtest.avi, where every body's true place is known.
@Suite(.onTestThreads) struct BodyRedetectionTests {
    /// vtest.avi's frame 60 seen through a 400x400 window that swings left and right (2 s
    /// period, up to 6 px a frame) and up and down (1.5 s), at 30 frames a second; and the bodies
    /// Dalal-Triggs HOG finds on the whole frame, moved into each view (the tracked box shape).
    static func sweep(frames count: Int) throws -> (frames: [Frame], bodies: [[UnitRect]]) {
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        var picture: Image?
        for _ in 0...60 { picture = try source.nextFrame()?.image }
        let still = try #require(picture)
        let found = try DetectorCatalog.make("hog-body", models: Fixtures.models).detect(in: still, minimumConfidence: 0.5)
        let bodies = found.filter { $0.type == .humanBody }.map { $0.rect.pixelRect(in: still.size) }
        try #require(bodies.count >= 2, "pedestrians to follow")
        let side = 400.0, out = ImageSize(width: 400, height: 400)
        var frames: [Frame] = [], truths: [[UnitRect]] = []
        for k in 0..<count {
            let t = Double(k) / 30
            let view = PixelRect(x: 250 + 60 * sin(2 * .pi * t / 2), y: 88 + 30 * sin(2 * .pi * t / 1.5), width: side, height: side)
            frames.append(Frame(index: k, time: t, image: try still.cropped(to: view, size: out)))
            truths.append(bodies.filter { $0.x >= view.x && $0.y >= view.y && $0.x + $0.width <= view.x + side && $0.y + $0.height <= view.y + side }
                .map { UnitRect(PixelRect(x: $0.x - view.x, y: $0.y - view.y, width: $0.width, height: $0.height), in: out) })
        }
        return (frames, truths)
    }

    /// For each body in view on each frame, how well the tracked body that covers it best does.
    static func overlaps(every: Int, redetection: Bool, followsCamera: Bool = false, _ sweep: (frames: [Frame], bodies: [[UnitRect]])) throws -> (overlaps: [Double], pipeline: TrackingPipeline) {
        var params = TrackingPipeline.Params()
        params.detectEvery = every
        params.followsCameraMotion = followsCamera
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make("hog-body", models: Fixtures.models), cues: nil,
                                        params: params, identifiers: .sequential)
        if redetection { pipeline.bodyRedetector = TemplateBodyRedetector() }
        var overlaps: [Double] = []
        for (k, (frame, truths)) in zip(sweep.frames, sweep.bodies).enumerated() {
            let tracked = try pipeline.process(frame).compactMap(\.bodyRect)
            // Reported from the second detection on (a person is confirmed by two).
            guard k > every else { continue }
            overlaps += truths.map { truth in tracked.map { $0.intersectionOverUnion(truth) }.max() ?? 0 }
        }
        return (overlaps, pipeline)
    }

    @Test func bodyBoxesStayOnPedestriansSweptPastBetweenDetections() throws {
        let sweep = try Self.sweep(frames: 90)
        let plain = try Self.overlaps(every: 8, redetection: false, sweep).overlaps
        let (redetected, pipeline) = try Self.overlaps(every: 8, redetection: true, sweep)
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
        func share(_ values: [Double]) -> Double { Double(values.filter { $0 >= 0.5 }.count) / Double(values.count) }
        print(String(format: "body sweep, detect every 8: IoU mean %.3f, share >= 0.5 %.3f without re-detection; mean %.3f, share %.3f with (%d re-detections)",
                     mean(plain), share(plain), mean(redetected), share(redetected), pipeline.redetections))
        #expect(pipeline.redetections >= 60, "bodies are found again between detections")
        // Pedestrians the detector misses in some views (two close together, one at the edge)
        // count as 0 in both: the share cannot reach 1.
        #expect(share(redetected) >= share(plain) + 0.2, "the boxes stay on the pedestrians: \(redetected.map { Int($0 * 100) })")
        #expect(mean(redetected) >= mean(plain) + 0.1, "\(mean(redetected)) vs \(mean(plain)) by the motion model alone")
        // Following the picture's own motion (as `track` does), with and without the look.
        let following = try Self.overlaps(every: 8, redetection: false, followsCamera: true, sweep).overlaps
        let both = try Self.overlaps(every: 8, redetection: true, followsCamera: true, sweep).overlaps
        print(String(format: "body sweep, following the camera: IoU mean %.3f, share %.3f; with re-detection mean %.3f, share %.3f",
                     mean(following), share(following), mean(both), share(both)))
        #expect(share(following) >= share(plain) + 0.2 && share(both) >= share(redetected) - 0.03, "\(share(following)), \(share(both))")
        #expect(mean(both) >= mean(redetected) - 0.03, "\(mean(both))")
    }

    @Test func aBodyTooSmallOrOffThePictureOrNotFiniteIsNotLookedFor() throws {
        let picture = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let redetector = TemplateBodyRedetector()
        for box in [UnitRect(x: 0.5, y: 0.5, width: 0.001, height: 0.001), UnitRect(x: 3, y: 3, width: 0.2, height: 0.4),
                    UnitRect(x: .nan, y: 0.2, width: 0.2, height: 0.4), UnitRect(x: 0.1, y: 0.1, width: 1e12, height: 1e12),
                    UnitRect(x: -0.5, y: 0.1, width: .infinity, height: 0.5)] {
            #expect(try redetector.template(of: box, in: picture) == nil, "\(box)")
        }
        let body = UnitRect(x: 0.3, y: 0.2, width: 0.2, height: 0.6)
        let template = try #require(try redetector.template(of: body, in: picture))
        #expect(try redetector.redetect(body: UnitRect(x: .nan, y: 0, width: 0.2, height: 0.6), template: template, in: picture) == nil)
        let same = try #require(try redetector.redetect(body: body, template: template, in: picture), "found where it was taken")
        #expect(abs(same.midX - body.midX) < 0.005 && abs(same.midY - body.midY) < 0.005, "\(same)")
        // On a 1 px picture nothing can be looked for.
        let tiny = try Image(pixels: [10, 10, 10], width: 1, height: 1, channels: 3)
        #expect(try redetector.template(of: body, in: tiny) == nil)
    }
}
