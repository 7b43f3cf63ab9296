import DockTrack

import Foundation
import Testing

/// People who move: a walker followed at their pace (the axes' feed-forward of the subject's
/// rate, ``SubjectMotion``), and a passer-by who does not pull the framing aside (a group shot
/// is joined after ``FramingController/Params/groupJoinAfter``).
@Suite(.onTestThreads) struct MovingSubjectTests {
    let level = CameraModel.webcam.angles(toward: 0.5, 0.6).x

    /// The mean distance of the walker from the middle of the picture while they walk steadily.
    func trailing(followsMotion: Bool) -> Double {
        var params = FramingController.Params()
        params.followsMotion = followsMotion
        var simulation = FramingSimulation(controller: FramingController(params: params))
        let level = level
        // From 0.3 rad left to the right at 0.15 rad/s (8.6°/s, a brisk walk two metres away).
        let walker = FramingSimulation.Person { t in DockOrientation(x: level, y: -0.3 + 0.15 * t, z: 0) }
        let samples = simulation.run(people: [walker], duration: 5)
        let walking = samples.filter { $0.time >= 2 }.compactMap { $0.seen[walker.id] }
        return walking.map { abs($0.x - 0.5) }.reduce(0, +) / Double(walking.count)
    }

    @Test func aWalkerIsFollowedNotTrailed() {
        let followed = trailing(followsMotion: true), trailed = trailing(followsMotion: false)
        #expect(followed < 0.5 * trailed, "followed \(followed), trailed \(trailed)")
        #expect(followed < 0.02, "the walker is kept within 2% of the middle: \(followed)")
    }

    @Test func aPasserByDoesNotPullTheFramingButSomeoneWhoStaysJoins() {
        let level = level
        let primary = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.1, z: 0) }
        let passerBy = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.3, z: 0) }
        let (primaryID, passerByID) = (primary.id, passerBy.id)
        // The passer-by is there from 3 s to 4 s only.
        var simulation = FramingSimulation(controller: FramingController())
        let brief = simulation.run(people: [primary, passerBy], duration: 5) { t in t >= 3 && t < 4 ? [primaryID, passerByID] : [primaryID] }
        let during = brief.filter { $0.time >= 3 && $0.time < 4.5 }.compactMap { $0.seen[primary.id]?.x }
        #expect(during.allSatisfy { abs($0 - 0.5) < 0.02 }, "the primary subject stays in the middle: \(during.min()!)...\(during.max()!)")
        // One who stays joins the shot: the two are framed together.
        var staying = FramingSimulation(controller: FramingController())
        let last = staying.run(people: [primary, passerBy], duration: 8) { t in t >= 3 ? [primaryID, passerByID] : [primaryID] }.last!.seen
        let middle = (last[primary.id]!.x + last[passerBy.id]!.x) / 2
        #expect(abs(middle - 0.5) < 0.04, "the group is centred: \(middle)")
    }

    /// At the end of its pan the dock cannot turn to a group shot reaching past it: the shot is
    /// narrowed to what it can reach, the primary subject on the target, not a group's middle
    /// it will never bring there.
    @Test func aGroupShotReachingPastThePansEndKeepsThePrimarySubjectOnTarget() throws {
        var params = FramingController.Params()
        params.limits.yaw.range = -0.3...0.3
        var controller = FramingController(params: params)
        func person(at x: Double, rank: Int) -> TrackedSubject {
            TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: x - 0.02, y: 0.3, width: 0.04, height: 0.25), saliencyRank: rank)
        }
        // The dock at the end of its pan; its person in the middle, a companion 3.4° beyond.
        let subjects = [person(at: 0.5, rank: 0), person(at: 0.586, rank: 1)]
        let end = DockOrientation(x: 0, y: 0.3, z: 0)
        for frame in 0..<60 {
            let t = Double(frame) / 30
            _ = controller.update(subjects: subjects, captureTime: t, poseAtCapture: end, pose: end, now: t)
        }
        let group = try #require(controller.aim(at: subjects))
        #expect(group.subject.x > 0.53, "the companion joined the shot: \(group.subject.x)")
        let reachable = try #require(controller.aim(at: subjects, seenFrom: end))
        #expect(abs(reachable.subject.x - 0.5) < 0.005, "\(reachable.subject.x)")
        // Within the range the group's middle stays.
        let inside = try #require(controller.aim(at: subjects, seenFrom: .zero))
        #expect(abs(inside.subject.x - group.subject.x) < 1e-9)
    }

    @Test func theRateIsTheSlopeOfOneSubjectsPoses() {
        var motion = SubjectMotion()
        let walker = UUID(), other = UUID()
        var rate = DockOrientation.zero
        // 30 frames a second, 0.2 rad/s with a jitter of 0.005 rad.
        for frame in 0..<30 {
            let t = Double(frame) / 30
            rate = motion.add(subject: walker, pose: DockOrientation(x: 0, y: 0.2 * t + 0.005 * sin(Double(frame) * 2.1), z: 0), at: t)
        }
        #expect(abs(rate.y - 0.2) < 0.04, "\(rate.y)")
        #expect(abs(rate.x) < 1e-9)
        // Another subject is not the same motion: it starts afresh.
        #expect(motion.add(subject: other, pose: DockOrientation(x: 0, y: 0.9, z: 0), at: 1.0) == .zero)
        // A subject placed anew far off its course starts afresh too.
        var jumping = SubjectMotion()
        for frame in 0..<15 { _ = jumping.add(subject: walker, pose: DockOrientation(x: 0, y: 0.2 * Double(frame) / 30, z: 0), at: Double(frame) / 30) }
        #expect(jumping.add(subject: walker, pose: DockOrientation(x: 0, y: -0.5, z: 0), at: 0.5) == .zero)
        // Numbers that are not numbers say nothing.
        #expect(jumping.add(subject: walker, pose: DockOrientation(x: .nan, y: .infinity, z: 0), at: 0.6) == .zero)
    }
}
