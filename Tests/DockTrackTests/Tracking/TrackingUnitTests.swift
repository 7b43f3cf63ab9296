import DockTrack
import Foundation
import Testing

@Suite(.onTestThreads) struct AssignmentTests {
    @Test func findsTheOptimumWhereGreedyFails() {
        // Greedy takes (0,0)=1 first and is then forced into (1,1)=10: total 11. Optimal: 2+3 = 5.
        let pairs = Assignment.minimumCost([[1, 2], [3, 10]])
        #expect(pairs.map { [$0.row, $0.column] } == [[0, 1], [1, 0]])
    }

    @Test func rectangularAndForbiddenPairs() {
        let inf = Double.infinity
        let pairs = Assignment.minimumCost([[inf, 0.2, 0.9], [0.1, inf, inf]], maximumCost: 1)
        #expect(pairs.map { [$0.row, $0.column] } == [[0, 1], [1, 0]])
        let tall = Assignment.minimumCost([[0.5], [0.1], [0.3]])
        #expect(tall.map { [$0.row, $0.column] } == [[1, 0]])
        #expect(Assignment.minimumCost([[5.0]], maximumCost: 1).isEmpty)
        #expect(Assignment.minimumCost([]).isEmpty)
    }
}

@Suite(.onTestThreads) struct KalmanTests {
    @Test func learnsAConstantVelocityAndExtrapolates() {
        var filter = ConstantVelocityFilter(position: 0, positionVariance: 1e-4, velocityVariance: 1, processNoise: 0.01, measurementNoise: 1e-4)
        for step in 1...30 {
            filter.predict(by: 0.1)
            filter.update(measurement: 0.02 * Double(step))  // 0.2 units per second
        }
        #expect(abs(filter.velocity - 0.2) < 0.01)
        filter.predict(by: 1)
        #expect(abs(filter.position - 0.8) < 0.02)
        filter.stop()
        filter.predict(by: 1)
        #expect(abs(filter.position - 0.8) < 0.02)
    }

    /// One wrong pairing (a box folded into someone else's detection, ten of its widths away)
    /// must not send the box across the picture: its speed stays within 8 of its widths a second.
    @Test func aBoxNeverLearnsASpeedNoPersonReaches() {
        let start = UnitRect(x: 0.5, y: 0.3, width: 0.04, height: 0.1)
        var box = BoxFilter(start)
        box.predict(by: 0.1)
        box.update(UnitRect(x: 0.9, y: 0.3, width: 0.04, height: 0.1))
        #expect(abs(box.velocity.x) <= 8 * 0.04 + 1e-9, "\(box.velocity)")
        // A walker's own speed is learned as it is: 2 widths a second, seen 10 times a second.
        var walker = BoxFilter(start)
        for step in 1...30 {
            walker.predict(by: 0.1)
            walker.update(UnitRect(x: 0.5 + 0.008 * Double(step), y: 0.3, width: 0.04, height: 0.1))
        }
        #expect(abs(walker.velocity.x - 0.08) < 0.005, "\(walker.velocity)")
    }

    /// A box measured a third shorter a round later (the person's legs found on their own) and
    /// then not seen for half a second (the tracker's coasting): it shrinks by 0.75 of its size
    /// a second at most, instead of to nothing (vtest.avi: a walker reported 0 px wide).
    @Test func aBoxNeverShrinksToNothingWhileCoasting() {
        var box = BoxFilter(UnitRect(x: 0.5, y: 0.3, width: 0.04, height: 0.14))
        box.predict(by: 0.4)
        box.update(UnitRect(x: 0.5, y: 0.28, width: 0.028, height: 0.095))
        for _ in 0..<5 { box.predict(by: 0.1) }
        #expect(box.rect.height > 0.055 && box.rect.width > 0.016, "\(box.rect)")
        // Growing as fast as a person walking towards the camera is followed as it is.
        var nearer = BoxFilter(UnitRect(x: 0.5, y: 0.3, width: 0.04, height: 0.1))
        for step in 1...20 {
            nearer.predict(by: 0.1)
            let h = 0.1 * (1 + 0.03 * Double(step))
            nearer.update(UnitRect(x: 0.5, y: 0.3, width: 0.4 * h, height: h))
        }
        #expect(abs(nearer.rect.height - 0.16) < 0.01, "\(nearer.rect)")
    }
}

/// The person tracker on made-up observations with exact timing (frame times are its clock).
@Suite(.onTestThreads) struct PersonTrackerTests {
    func body(x: Double, y: Double = 0.3) -> Observation {
        Observation(type: .humanBody, rect: UnitRect(x: x, y: y, width: 0.06, height: 0.2), confidence: 0.9)
    }

    @Test func twoPeopleCrossingKeepTheirIdentities() {
        var tracker = PersonTracker(identifiers: .sequential)
        var idAtLeft: UUID?, idAtRight: UUID?
        // One walks left to right, the other right to left, at 10 fps; they overlap mid-way.
        for step in 0...40 {
            let t = Double(step) * 0.1
            let a = body(x: 0.2 + 0.015 * Double(step)), b = body(x: 0.8 - 0.015 * Double(step), y: 0.32)
            let subjects = tracker.update(time: t, observations: [a, b])
            if step == 2 {
                idAtLeft = subjects.min { $0.rect.midX < $1.rect.midX }?.id
                idAtRight = subjects.max { $0.rect.midX < $1.rect.midX }?.id
            }
            if step == 40 {
                // After crossing, the one who started at the left is now at the right.
                #expect(subjects.count == 2)
                #expect(subjects.max { $0.rect.midX < $1.rect.midX }?.id == idAtLeft)
                #expect(subjects.min { $0.rect.midX < $1.rect.midX }?.id == idAtRight)
            }
        }
        #expect(idAtLeft != nil && idAtLeft != idAtRight)
    }

    @Test func aFaceAndTheBodyBelowItAreOnePerson() {
        var tracker = PersonTracker(identifiers: .sequential)
        let face = Observation(type: .humanFace, rect: UnitRect(x: 0.42, y: 0.62, width: 0.06, height: 0.08), confidence: 0.9)
        let body = Observation(type: .humanBody, rect: UnitRect(x: 0.38, y: 0.2, width: 0.14, height: 0.5), confidence: 0.9)
        var subjects: [TrackedSubject] = []
        for step in 0..<3 { subjects = tracker.update(time: Double(step) / 30, observations: [face, body]) }
        #expect(subjects.count == 1)
        #expect(subjects[0].faceRect != nil)
        #expect(abs(subjects[0].rect.maxY - 0.7) < 0.01 && abs(subjects[0].rect.minY - 0.2) < 0.01)
    }

    @Test func aBriefOcclusionKeepsTheIdentityALongOneDoesNot() {
        var tracker = PersonTracker(identifiers: .sequential)
        var first: UUID?
        for step in 0..<10 { first = tracker.update(time: Double(step) * 0.1, observations: [body(x: 0.5)]).first?.id }
        // Hidden for 0.3 s (the detector sees nothing on three looks), then back.
        for step in 10..<13 {
            let subjects = tracker.update(time: Double(step) * 0.1, observations: [])
            #expect(subjects.first?.id == first, "still reported while briefly hidden")
            #expect(subjects.first?.isObserved == false)
        }
        #expect(tracker.update(time: 1.3, observations: [body(x: 0.5)]).first?.id == first)
        // Gone for 5 s (past the 4 s a track is kept for reacquisition): dropped; coming back is
        // a new subject (after confirmation).
        for step in 15..<65 { _ = tracker.update(time: Double(step) * 0.1, observations: []) }
        #expect(tracker.update(time: 6.5, observations: []).isEmpty)
        _ = tracker.update(time: 6.6, observations: [body(x: 0.5)])
        let back = tracker.update(time: 6.7, observations: [body(x: 0.5)])
        #expect(back.count == 1 && back.first?.id != first)
    }

    /// Two subjects on one person are merged once they have looked like one for a second: a
    /// detector that boxes one walker twice (a box and a slightly larger one over it) gives one
    /// subject, under the identifier seen first. Two people crossing overlap as much, briefly,
    /// and keep theirs (``twoPeopleCrossingKeepTheirIdentities``).
    @Test func twoSubjectsOnOnePersonAreMerged() {
        var tracker = PersonTracker(identifiers: .sequential)
        let box = UnitRect(x: 0.4, y: 0.3, width: 0.06, height: 0.2)
        let larger = UnitRect(x: 0.395, y: 0.29, width: 0.07, height: 0.22)
        _ = tracker.update(time: 0, observations: [Observation(type: .humanBody, rect: box, confidence: 0.9)])
        _ = tracker.update(time: 0.1, observations: [Observation(type: .humanBody, rect: box, confidence: 0.9)])
        var counts: [Int] = []
        var last: [TrackedSubject] = []
        for step in 2...20 {
            last = tracker.update(time: Double(step) * 0.1, observations: [Observation(type: .humanBody, rect: box, confidence: 0.9),
                                                                           Observation(type: .humanBody, rect: larger, confidence: 0.8)])
            counts.append(last.count)
        }
        #expect(counts.suffix(8).allSatisfy { $0 == 1 }, "one subject once they have been together a second: \(counts)")
        #expect(last.first?.id == UUID(uuidString: "00000000-0000-0000-0000-000000000001"), "\(last)")
    }

    @Test func aOneFrameFalseHitIsNeverReported() {
        var tracker = PersonTracker(identifiers: .sequential)
        var reported = 0
        for step in 0..<20 {
            let observations = step == 5 ? [body(x: 0.5), body(x: 0.1, y: 0.7)] : [body(x: 0.5)]
            reported = max(reported, tracker.update(time: Double(step) * 0.1, observations: observations).count)
        }
        #expect(reported == 1)
    }

    @Test func betweenDetectionsSubjectsMoveByTheirVelocity() {
        var tracker = PersonTracker(identifiers: .sequential)
        for step in 0..<20 { _ = tracker.update(time: Double(step) * 0.1, observations: [body(x: 0.2 + 0.01 * Double(step))]) }
        // Detection skipped for 2 frames (nil = the detector did not run): within
        // reportLostFor (0.3 s), the subject is reported where its velocity took it.
        let predicted = tracker.update(time: 2.1, observations: nil)
        let expectedMidX = 0.2 + 0.01 * 21 + 0.03
        #expect(predicted.count == 1)
        #expect(abs((predicted.first?.rect.midX ?? 0) - expectedMidX) < 0.01)
        // 0.4 s after the last detection, at ten a second: it is no longer reported (a
        // detector that sees everyone would have missed it on four looks).
        #expect(tracker.update(time: 2.3, observations: nil).isEmpty)
    }

    @Test func identifiersAreSequentialWhenAsked() {
        var source = IdentifierSource.sequential
        #expect(source.next().uuidString == "00000000-0000-0000-0000-000000000001")
        #expect(source.next().uuidString == "00000000-0000-0000-0000-000000000002")
    }
}

@Suite(.onTestThreads) struct SaliencyRankerTests {
    func subject(_ n: UInt8, x: Double, size: Double, speaking: Double? = nil) -> TrackedSubject {
        TrackedSubject(id: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n)), kind: .person,
                       rect: UnitRect(x: x, y: 0.3, width: size, height: size * 2), speakingConfidence: speaking)
    }

    @Test func closeScoresDoNotFlipTheRanking() {
        var ranker = SaliencyRanker()
        var ranks: [[Int?]] = []
        for step in 0..<20 {
            // Two people of nearly the same size swap which one is larger every frame.
            let wobble = step % 2 == 0 ? 0.005 : -0.005
            var subjects = [subject(1, x: 0.3, size: 0.1 + wobble), subject(2, x: 0.6, size: 0.1 - wobble)]
            ranker.rank(&subjects)
            ranks.append(subjects.map(\.saliencyRank))
        }
        #expect(Set(ranks.map { $0.map { $0 ?? 0 } }).count == 1, "ranking flipped: \(ranks)")
    }

    @Test func aClearlyMoreSalientSubjectOvertakes() {
        var ranker = SaliencyRanker()
        var subjects = [subject(1, x: 0.3, size: 0.1), subject(2, x: 0.6, size: 0.1)]
        ranker.rank(&subjects)
        let second = subjects.first { $0.saliencyRank == 2 }!.id
        // The second one starts speaking: well past the hysteresis margin.
        subjects = subjects.map { var s = $0; if s.id == second { s.speakingConfidence = 0.9 }; return s }
        ranker.rank(&subjects)
        #expect(subjects.first { $0.id == second }?.saliencyRank == 1)
    }

    @Test func selectionByPointUsesTheUpperLeftOrigin() throws {
        var ranker = SaliencyRanker()
        let high = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.1, y: 0.7, width: 0.2, height: 0.2))
        let low = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.1, y: 0.1, width: 0.2, height: 0.2))
        var subjects = [high, low]
        // A tap 20% from the top of the picture lands on the subject in the upper part.
        #expect(try ranker.selectSubject(atX: 0.2, y: 0.2, in: subjects) == high.id)
        ranker.rank(&subjects)
        #expect(subjects.first { $0.id == high.id }?.saliencyRank == 1)
        #expect(try ranker.selectSubject(atX: 0.2, y: 0.8, in: subjects) == low.id)
        #expect(throws: SelectionError.noSubjectFound(x: 0.9, y: 0.5)) {
            try ranker.selectSubject(atX: 0.9, y: 0.5, in: subjects)
        }
    }

    @Test func selectedIdentifiersRankFirstWhileInViewAndClearingRestoresAutomatic() {
        var ranker = SaliencyRanker()
        let big = subject(1, x: 0.4, size: 0.3), small = subject(2, x: 0.05, size: 0.05)
        var subjects = [big, small]
        ranker.selectSubjects([small.id])
        ranker.rank(&subjects)
        #expect(subjects.first { $0.id == small.id }?.saliencyRank == 1)
        // Out of view: the selection waits; the others rank as usual.
        var alone = [big]
        ranker.rank(&alone)
        #expect(alone[0].saliencyRank == 1)
        ranker.clearSelection()
        ranker.rank(&subjects)
        #expect(subjects.first { $0.id == big.id }?.saliencyRank == 1)
    }
}

@Suite(.onTestThreads) struct SubjectStatesFormatTests {
    @Test func stateLineHasTheDocumentedFields() {
        var source = IdentifierSource.sequential
        let person = TrackedSubject(id: source.next(), kind: .person, rect: UnitRect(x: 0.1, y: 0.2, width: 0.3, height: 0.4),
                                    saliencyRank: 1, speakingConfidence: 0.8, lookingAtCameraConfidence: nil, timeInView: 2.5)
        let coin = TrackedSubject(id: source.next(), kind: .object, rect: UnitRect(x: 0.5, y: 0.5, width: 0.1, height: 0.1), saliencyRank: 2)
        let line = SubjectStatesRecord(frame: 12, time: 0.4, subjects: [person, coin]).jsonLine
        #expect(line == #"{"frame":12,"time":0.4,"subjects":[{"identifier":"00000000-0000-0000-0000-000000000001","kind":"person","rect":{"x":0.1,"y":0.2,"width":0.3,"height":0.4},"saliencyRank":1,"timeInView":2.5,"speakingConfidence":0.8,"lookingAtCameraConfidence":null},{"identifier":"00000000-0000-0000-0000-000000000002","kind":"object","rect":{"x":0.5,"y":0.5,"width":0.1,"height":0.1},"saliencyRank":2,"timeInView":0.0}]}"#)
    }
}
