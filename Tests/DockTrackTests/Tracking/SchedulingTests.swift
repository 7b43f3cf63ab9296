import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// Detection schedules on the test kit's scripted detector: exact counts, no models.
@Suite(.onTestThreads) struct SchedulingTests {
    static let face = Observation(type: .humanFace, rect: UnitRect(x: 0.4, y: 0.5, width: 0.1, height: 0.15), confidence: 0.9)

    @Test(arguments: [1, 3, 4])
    func theDetectorRunsOnEveryNthFrameAndTheIdentityHoldsBetween(every: Int) throws {
        let detector = ScriptedDetector(always: [Self.face])
        var params = TrackingPipeline.Params()
        params.detectEvery = every
        let pipeline = TrackingPipeline(detector: detector, cues: nil, params: params, identifiers: .sequential)
        var ids = Set<UUID>()
        var counts: [Int] = []
        for k in 0..<24 {
            let subjects = try pipeline.process(try Frame.blank(index: k, time: Double(k) / 30))
            counts.append(subjects.count)
            ids.formUnion(subjects.map(\.id))
        }
        // A person is reported once confirmed by a few detections, then on every frame.
        let first = try #require(counts.firstIndex(of: 1), "never reported: \(counts)")
        #expect(first <= 3 * every)
        #expect(counts[first...].allSatisfy { $0 == 1 }, "\(counts)")
        #expect(detector.calls == (0..<24).filter { $0 % every == 0 || $0 == TrackingPipeline.secondLook }.count)
        #expect(pipeline.detections == detector.calls)
        #expect(ids.count == 1, "one person, one identity")
    }

    @Test func anIdlePartOfACombinedDetectorWaitsUpToItsLimit() throws {
        let faces = ScriptedDetector(name: "faces", always: [Self.face])
        let bodies = ScriptedDetector(name: "bodies", always: [])
        let combined = CombinedDetector([faces, bodies])
        let schedule = IdlePartSchedule(combined, maximumInterval: 4)
        let image = try Frame.blank(index: 0, time: 0).image
        for _ in 0..<40 { _ = try schedule.detect(in: image, minimumConfidence: 0.5) }
        #expect(faces.calls == 40, "the part that finds something runs every round")
        #expect(bodies.calls <= 13 && bodies.calls >= 10, "the idle part runs about one round in four: \(bodies.calls)")
    }

    /// With faces looked for again on every frame between rounds, a part that found faces only
    /// runs every other round; one that found a body still runs every round.
    @Test func aPartThatFoundFacesOnlyRunsEveryOtherRound() throws {
        let body = Observation(type: .humanBody, rect: UnitRect(x: 0.6, y: 0.1, width: 0.1, height: 0.5), confidence: 0.9)
        let faces = ScriptedDetector(name: "faces", always: [Self.face])
        let bodies = ScriptedDetector(name: "bodies", always: [body])
        let schedule = IdlePartSchedule(CombinedDetector([faces, bodies]), faceInterval: 2)
        let image = try Frame.blank(index: 0, time: 0).image
        for _ in 0..<20 { _ = try schedule.detect(in: image, minimumConfidence: 0.5) }
        #expect(faces.calls == 10 && bodies.calls == 20, "faces \(faces.calls), bodies \(bodies.calls)")
        let alone = ScriptedDetector(name: "faces", always: [Self.face])
        let everyRound = IdlePartSchedule(CombinedDetector([alone]))
        for _ in 0..<20 { _ = try everyRound.detect(in: image, minimumConfidence: 0.5) }
        #expect(alone.calls == 20, "faceInterval 1 (the default): every round")
    }

    /// On the rounds a face part rests, the faces it last found still drop the bodies beside a
    /// close-up (hair, shoulders, the backdrop: what HOG fires on in Megamind.avi), so the
    /// body part finds nothing kept and keeps resting too.
    @Test func bodiesBesideACloseUpAreDroppedOnTheRoundsTheFacePartRests() throws {
        let closeUp = Observation(type: .humanFace, rect: UnitRect(x: 0.35, y: 0.3, width: 0.3, height: 0.4), confidence: 0.9)
        let hair = Observation(type: .humanBody, rect: UnitRect(x: 0.6, y: 0.2, width: 0.1, height: 0.3), confidence: 0.9)
        let faces = ScriptedDetector(name: "faces", always: [closeUp])
        let bodies = ScriptedDetector(name: "bodies", always: [hair])
        let schedule = IdlePartSchedule(CombinedDetector([faces, bodies]), maximumInterval: 8, faceInterval: 3)
        let image = try Frame.blank(index: 0, time: 0).image
        var bodiesKept = 0
        for _ in 0..<48 {
            bodiesKept += try schedule.detect(in: image, minimumConfidence: 0.5).filter { $0.type == .humanBody }.count
        }
        #expect(faces.calls == 16, "faces every 3rd round: \(faces.calls)")
        #expect(bodiesKept == 0)
        #expect(bodies.calls <= 9, "the body part rests up to 8 rounds: \(bodies.calls)")
    }

    /// A face detector that can look for tall faces only, and says what it was asked.
    final class SizedFaces: SizeLimitedDetector, @unchecked Sendable {
        let name = "sized"
        var faces: [Observation]
        /// The smallest height asked on each call (0: everything).
        var asked: [Double] = []
        init(_ faces: [Observation]) { self.faces = faces }
        func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
            try detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: 0)
        }
        func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double) throws(DetectorError) -> [Observation] {
            asked.append(smallestHeight)
            return faces.filter { $0.rect.height >= smallestHeight }
        }
    }

    @Test func betweenFullSearchesAPartLooksOnlyForThingsHalfAsTallAsTheSmallestItFound() throws {
        let big = Observation(type: .humanFace, rect: UnitRect(x: 0.1, y: 0.5, width: 0.2, height: 0.3), confidence: 0.9)
        let small = Observation(type: .humanFace, rect: UnitRect(x: 0.6, y: 0.5, width: 0.05, height: 0.04), confidence: 0.9)
        let faces = SizedFaces([big])
        let schedule = IdlePartSchedule(CombinedDetector([faces]), maximumInterval: 4, fullSearchInterval: 4)
        let image = try Frame.blank(index: 0, time: 0).image
        for _ in 0..<6 { _ = try schedule.detect(in: image, minimumConfidence: 0.5) }
        #expect(faces.asked == [0, 0.15, 0.15, 0.15, 0, 0.15], "\(faces.asked)")
        #expect(schedule.fullSearches == [2] && schedule.runs == [6])
        // A small face comes into view: the next full search finds it, and from then on the
        // searches between go down to half its size.
        faces.faces = [big, small]
        var found: [Int] = []
        for _ in 0..<4 { found.append(try schedule.detect(in: image, minimumConfidence: 0.5).count) }
        #expect(found == [1, 1, 2, 2], "\(found)")
        #expect(faces.asked.suffix(4) == [0.15, 0.15, 0, 0.02], "\(faces.asked.suffix(4))")
        // Nothing found: the part waits a round (idle), then looks for everything.
        faces.faces = []
        for _ in 0..<3 { _ = try schedule.detect(in: image, minimumConfidence: 0.5) }
        #expect(faces.asked.suffix(2) == [0.02, 0], "\(faces.asked.suffix(2))")
    }

    @Test func aDetectionThreadTimesDetectionsOnTheClockItIsGiven() throws {
        let clock = ManualClock(at: 100)
        let detector = ScriptedDetector { _, _ in
            clock.advance(by: 0.25)
            return [Self.face]
        }
        let worker = DetectionWorker(detector: detector, minimumConfidence: 0.5, clock: clock.reading)
        defer { worker.stop() }
        worker.offer(try Frame.blank(index: 0, time: 0))
        var results: [DetectionWorker.Result] = []
        try waitWhile(atMost: .seconds(10), every: .milliseconds(10)) {
            results = try worker.takeResults()
            return results.isEmpty
        }
        #expect(results.count == 1)
        #expect(results.first?.seconds == 0.25)
    }

    /// Live, the detection thread detects no more often than every Nth frame, whatever its
    /// detector could keep up with (the frame loop keeps the cores it needs).
    @Test func aDetectionThreadDetectsAtMostEveryNthFrame() throws {
        let detector = ScriptedDetector(always: [Self.face])
        let worker = DetectionWorker(detector: detector, minimumConfidence: 0.5, every: 4)
        defer { worker.stop() }
        var detected: [Int] = []
        for k in 0..<24 {
            // Each frame handed over once the thread is done with the one before (as a detector
            // that keeps up sees a live stream); decided by the thread's own count, not by time.
            worker.offer(try Frame.blank(index: k, time: Double(k) / 30))
            #expect(waitWhile(every: .milliseconds(2)) { worker.handledFrames < k + 1 }, "frame \(k) handled")
            detected += try worker.takeResults().map(\.frameIndex)
        }
        #expect(detected == [0, 4, 8, 12, 16, 20], "\(detected)")
    }

    /// Live, a few frames too small for the detector (a stream's first pictures after a
    /// reconnect) are passed over and the ones after them detected; thirty in a row are the
    /// error that says so.
    @Test func aDetectionThreadPassesOverAFewFramesTooSmallForItsDetector() throws {
        let worker = DetectionWorker(detector: try HOGPeopleDetector(), minimumConfidence: 0.5)
        defer { worker.stop() }
        /// Offers a frame and waits until the thread is done with it.
        var offered = 0
        func offer(_ frame: Frame) throws {
            worker.offer(frame)
            offered += 1
            #expect(waitWhile(every: .milliseconds(5)) { worker.handledFrames < offered }, "frame \(frame.index) handled")
        }
        let tiny = ImageSize(width: 16, height: 16), usual = ImageSize(width: 160, height: 120)
        try offer(try Frame.blank(index: 0, time: 0, size: usual))
        for k in 1...5 { try offer(try Frame.blank(index: k, time: Double(k), size: tiny)) }
        try offer(try Frame.blank(index: 6, time: 6, size: usual))
        let results = try worker.takeResults()
        #expect(results.map(\.frameIndex) == [0, 6], "the usual frames before and after were detected")
        var failed = false
        for k in 7..<(7 + DetectionWorker.tooSmallFramesAllowed + 2) where !failed {
            try offer(try Frame.blank(index: k, time: Double(k), size: tiny))
            do { _ = try worker.takeResults() } catch { failed = "\(error)".contains("too small") }
        }
        #expect(failed, "thirty in a row are an error")
    }

    @Test func aFailingDetectorSurfacesItsErrorFromThePipeline() throws {
        let pipeline = TrackingPipeline(detector: ScriptedDetector(failingCall: 2) { _, _ in [] }, cues: nil)
        for k in 0..<2 { _ = try pipeline.process(try Frame.blank(index: k, time: Double(k))) }
        #expect(throws: DetectorError.self) { try pipeline.process(try Frame.blank(index: 2, time: 2)) }
    }

    @Test func customTrackingGoesThroughThePipelineRankedAndWithStableIdentities() throws {
        let pipeline = TrackingPipeline(detector: nil, cues: nil, identifiers: .sequential)
        var ids = Set<UUID>()
        for k in 0..<20 {
            let x = 0.2 + Double(k) * 0.005
            let near = Observation(type: .humanFace, rect: UnitRect(x: x, y: 0.5, width: 0.2, height: 0.3), confidence: 0.9)
            let far = Observation(type: .humanFace, rect: UnitRect(x: 0.7, y: 0.5, width: 0.05, height: 0.08), confidence: 0.9)
            let subjects = try pipeline.process(observations: [far, near], at: Double(k) / 20)
            ids.formUnion(subjects.map(\.id))
            guard k >= 5 else { continue }  // confirmed by then
            #expect(subjects.map(\.saliencyRank) == [1, 2])
            #expect(abs((subjects.first?.faceRect?.width ?? 0) - 0.2) < 0.01, "the big face near the camera ranks first")
        }
        #expect(ids.count == 2)
    }
}

/// Rounds passed over when nothing calls for a look: the picture did not move outside what the
/// last look found.
@Suite(.onTestThreads) struct NeedlessRoundTests {
    static let person = Observation(type: .humanBody, rect: UnitRect(x: 0.1, y: 0.2, width: 0.15, height: 0.5), confidence: 0.9)

    /// A textured 320x240 picture (a still room), with a 40x40 bright block at (`blockX`, 180)
    /// px from the top-left when given (someone walking in, far from the person found).
    static func room(blockX: Int? = nil) throws -> Image {
        var pixels = [UInt8](repeating: 0, count: 320 * 240 * 3)
        for y in 0..<240 {
            for x in 0..<320 {
                let value = UInt8(truncatingIfNeeded: (x * 7 + y * 13) % 97 + ((x / 16 + y / 16) % 2) * 100)
                var bright = false
                if let blockX { bright = (blockX..<blockX + 40).contains(x) && (180..<220).contains(y) }
                for c in 0..<3 { pixels[(y * 320 + x) * 3 + c] = bright ? 255 : value }
            }
        }
        return try Image(pixels: pixels, width: 320, height: 240, channels: 3)
    }

    @Test func aStillPictureIsLookedAtOnceEveryThirdRound() throws {
        let people = ScriptedDetector(name: "people", always: [Self.person])
        people.findsEveryPerson = true
        let schedule = IdlePartSchedule(CombinedDetector([people]), longestNeedlessRest: 2)
        let room = try Self.room()
        let looked = try (0..<9).map { _ in try schedule.lookIfNeeded(in: room, minimumConfidence: 0.5) != nil }
        #expect(looked == [true, false, false, true, false, false, true, false, false])
        #expect(people.calls == 3 && schedule.passedOver == 6, "calls \(people.calls), passed over \(schedule.passedOver)")
        // detect(in:) always looks (eval's pictures, the bench's detectors alone).
        _ = try schedule.detect(in: room, minimumConfidence: 0.5)
        #expect(people.calls == 4)
    }

    @Test func somethingMovingOutsideThePeopleFoundIsLookedAt() throws {
        let people = ScriptedDetector(name: "people", always: [Self.person])
        people.findsEveryPerson = true
        let schedule = IdlePartSchedule(CombinedDetector([people]), longestNeedlessRest: 2)
        #expect(try schedule.lookIfNeeded(in: try Self.room(), minimumConfidence: 0.5) != nil)
        // A block walks in on the right, far from the person at the left: every round looks.
        for x in [200, 220, 240] {
            #expect(try schedule.lookIfNeeded(in: try Self.room(blockX: x), minimumConfidence: 0.5) != nil, "block at \(x)")
        }
        #expect(schedule.passedOver == 0)
    }

    @Test func withoutAPersonNetworkOrWithNoRestEveryRoundLooks() throws {
        let room = try Self.room()
        let faces = ScriptedDetector(name: "faces", always: [SchedulingTests.face])
        let notPeople = IdlePartSchedule(CombinedDetector([faces]), longestNeedlessRest: 2)
        let people = ScriptedDetector(name: "people", always: [Self.person])
        people.findsEveryPerson = true
        let noRest = IdlePartSchedule(CombinedDetector([people]))
        for _ in 0..<6 {
            #expect(try notPeople.lookIfNeeded(in: room, minimumConfidence: 0.5) != nil)
            #expect(try noRest.lookIfNeeded(in: room, minimumConfidence: 0.5) != nil)
        }
        #expect(faces.calls == 6 && people.calls == 6)
    }

    /// A round passed over is no evidence that someone left: the person the last look found
    /// stays reported however long no look comes (here 1.2 s); after a look that misses them,
    /// for one and a half look intervals from the last that found them, as always.
    @Test func aPersonTheLastLookFoundStaysReportedUntilALookMissesThem() throws {
        var tracker = PersonTracker(identifiers: .sequential)
        let body = UnitRect(x: 0.4, y: 0.3, width: 0.06, height: 0.15)
        let seen = [Observation(type: .humanBody, rect: body, confidence: 0.9)]
        _ = tracker.update(time: 0, observations: seen)
        let id = try #require(tracker.update(time: 0.1, observations: seen).first?.id)
        for k in 2...13 {
            _ = tracker.update(time: Double(k) * 0.1, observations: nil)
            let carried = tracker.refresh([SubjectSighting(id: id, face: nil, body: body)]) ?? []
            #expect(carried.map(\.id) == [id], "carried by its look at \(Double(k) * 0.1) s, no look since 0.1 s")
        }
        _ = tracker.update(time: 1.4, observations: [])
        var lastReported = 1.4
        for k in 15...30 {
            _ = tracker.update(time: Double(k) * 0.1, observations: nil)
            if (tracker.refresh([SubjectSighting(id: id, face: nil, body: body)]) ?? []).contains(where: { $0.id == id }) {
                lastReported = Double(k) * 0.1
            }
        }
        // Then, as for any look that misses: one and a half look intervals (1.3 s apart) after
        // the last that found them, 2.05 s.
        #expect(abs(lastReported - 2.0) < 0.05, "unreported after the look that missed them: \(lastReported)")
    }
}
