import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// Where a dock pointed, from what it reported; how late it answers; where it looks for people.
@Suite(.onTestThreads) struct ReportedMotionTests {
    @Test func positionsAreInterpolatedBetweenReportsAndExtrapolatedALittlePast() throws {
        var motion = ReportedMotion()
        #expect(motion.motion(at: 1) == nil, "nothing reported, nothing known")
        motion.record(MotionState(time: 1, position: DockOrientation(y: 0.1), velocity: AngularVelocity(y: 1)))
        motion.record(MotionState(time: 1.2, position: DockOrientation(y: 0.3), velocity: AngularVelocity(y: 1)))
        motion.record(MotionState(time: 1.1, position: DockOrientation(y: 9), velocity: .zero))  // out of order: dropped
        motion.record(MotionState(time: 1.3, position: DockOrientation(y: .nan), velocity: .zero))  // not a measurement
        #expect(motion.states.count == 2)
        #expect(abs(try #require(motion.motion(at: 1.05)).position.y - 0.15) < 1e-9)
        #expect(try #require(motion.motion(at: 0.5)).position.y == 0.1, "before the first report: the first")
        #expect(abs(try #require(motion.motion(at: 1.3)).position.y - 0.4) < 1e-9, "on at the last velocity")
        #expect(abs(try #require(motion.motion(at: 100)).position.y - 0.6) < 1e-9, "for at most 0.3 s")
        #expect(try #require(motion.motion(at: .infinity)).position.y == 0.3)
    }

    @Test func pastTheLastReportTheCommandsThatReachedTheMotorsAreFollowed() throws {
        var motion = ReportedMotion(initialLatency: 0.1)
        motion.acceleration = DockVector(x: 100, y: 100, z: 100)
        motion.record(MotionState(time: 0, position: .zero, velocity: .zero))
        motion.commanded(.setAngularVelocity(AngularVelocity(y: 1)), at: 0)
        // The command reaches the motors at 0.1 s: still at 0.1, then turning at about 1 rad/s.
        #expect(abs(try #require(motion.motion(at: 0.1)).position.y) < 1e-9)
        let later = try #require(motion.motion(at: 0.3))
        #expect(abs(later.position.y - 0.2) < 0.01 && abs(later.velocity.y - 1) < 1e-9, "\(later)")
    }

    /// A dock that stops itself (the phone taken off it): past its last report it stays where it
    /// was, though the last command sent was a turn (it carried on at 1 rad/s).
    @Test func aDockThatStoppedItselfIsNotCarriedOnByTheLastCommand() throws {
        var motion = ReportedMotion(initialLatency: 0.05)
        motion.record(MotionState(time: 0, position: .zero, velocity: AngularVelocity(y: 1)))
        motion.commanded(.setAngularVelocity(AngularVelocity(y: 1)), at: 0.05)
        motion.record(MotionState(time: 0.1, position: DockOrientation(y: 0.1), velocity: AngularVelocity(y: 1)))
        #expect(abs(try #require(motion.motion(at: 0.2)).velocity.y - 1) < 1e-9, "turning as told")
        motion.stopped(at: 0.1)
        let after = try #require(motion.motion(at: 0.3))
        #expect(after.velocity.y == 0 && abs(after.position.y - 0.1) < 1e-9, "\(after)")
    }

    /// A device that jumps to the orientation it is sent (a UVC camera's absolute pan): its
    /// reports show the jump as a speed of radians per poll. Past the last report the dock stays
    /// at the orientation it was sent, however late the next report; a velocity command after it
    /// is followed again. (Carried on at the jump's speed, a late report once put the camera 0.18
    /// of the view past a still person on a loaded CI machine.)
    @Test func pastTheLastReportAMoveToAnOrientationStopsThere() throws {
        var motion = ReportedMotion(initialLatency: 0.01)
        motion.record(MotionState(time: 0, position: .zero, velocity: .zero))
        motion.commanded(.setOrientation(DockOrientation(y: 0.3), duration: 0, relative: false), at: 0.005)
        motion.record(MotionState(time: 0.02, position: DockOrientation(y: 0.3), velocity: AngularVelocity(y: 15)))
        for late in [0.03, 0.05, 0.1, 0.3] {
            let at = try #require(motion.motion(at: 0.02 + late))
            #expect(abs(at.position.y - 0.3) < 1e-9 && at.velocity.y == 0, "\(late) s after the report: \(at)")
        }
        // Part of the way there: on at the reported speed, up to the target, not past it.
        var partway = ReportedMotion(initialLatency: 0.01)
        partway.record(MotionState(time: 0, position: .zero, velocity: .zero))
        partway.commanded(.setOrientation(DockOrientation(x: -0.1, y: 0.3, z: 0), duration: 0, relative: false), at: 0.005)
        partway.record(MotionState(time: 0.1, position: DockOrientation(x: -0.05, y: 0.2, z: 0), velocity: AngularVelocity(x: -0.5, y: 1, z: 0)))
        let soon = try #require(partway.motion(at: 0.15))
        #expect(abs(soon.position.y - 0.25) < 1e-9 && abs(soon.position.x + 0.075) < 1e-9, "\(soon)")
        let later = try #require(partway.motion(at: 0.35))
        #expect(abs(later.position.y - 0.3) < 1e-9 && abs(later.position.x + 0.1) < 1e-9, "\(later)")
        // A velocity command after the move: followed, past the old target.
        motion.commanded(.setAngularVelocity(AngularVelocity(y: 1)), at: 0.03)
        let turning = try #require(motion.motion(at: 0.2))
        #expect(turning.position.y > 0.4, "\(turning)")
    }

    @Test func theLatencyIsMeasuredFromWhenTheReportsShowMotion() {
        // A simulated dock that takes each command 120 ms late, reporting every 50 ms.
        var dock = SimulatedDock()
        var motion = ReportedMotion()
        var queued: [(Double, DockCommand)] = []
        var t = 0.0
        for k in 0..<200 {
            t = Double(k) * 0.01
            if k % 100 == 10 { let c = DockCommand.setAngularVelocity(AngularVelocity(y: 0.8)); motion.commanded(c, at: t); queued.append((t + 0.12, c)) }
            if k % 100 == 60 { let c = DockCommand.setAngularVelocity(.zero); motion.commanded(c, at: t); queued.append((t + 0.12, c)) }
            while let (at, c) = queued.first, at <= t { queued.removeFirst(); _ = try? dock.apply(c, at: at) }
            if k % 5 == 0 { motion.record(dock.motion(at: t)) }
        }
        #expect(motion.latency.samples.count == 2, "\(motion.latency.samples)")
        #expect(abs(motion.latency.estimate - 0.12) < 0.05, "measured \(motion.latency.samples)")
    }

    /// A busy machine: the reports come late and the speed read from them is low, which traces
    /// the start of the motion back past reports that still showed none (a CI run measured a
    /// camera's 60 ms as 0 and 29 ms). The start is never put before such a report.
    @Test func theMotionNeverBeganBeforeAReportThatShowedNone() {
        var estimator = LatencyEstimator(initial: 0.1)
        let rest = MotionState(time: 0, position: .zero, velocity: .zero)
        estimator.commanded(.setAngularVelocity(AngularVelocity(y: 0.5)), at: 0, last: rest)
        estimator.observed(MotionState(time: 0.02, position: .zero, velocity: .zero))
        estimator.observed(MotionState(time: 0.05, position: .zero, velocity: .zero))
        estimator.observed(MotionState(time: 0.09, position: DockOrientation(y: 0.003), velocity: AngularVelocity(y: 0.02)))
        #expect(estimator.samples.count == 1)
        #expect(abs((estimator.samples.first ?? 0) - 0.05) < 1e-9, "\(estimator.samples)")
    }

    @Test func theSearchLooksWhereTheSubjectWasHeadingThenSweepsThenGoesHome() {
        var search = SubjectSearch()
        let camera = CameraModel.webcam, limits = DockLimits.standard
        // Lost while moving right at 0.3 rad/s: wait a moment where it was lost, then look half a
        // view further right.
        #expect(search.goal(now: 0, pose: .zero, lost: (DockOrientation(y: 0.2), 0.3), limits: limits, camera: camera, home: .zero) == .hold)
        let first = search.goal(now: 0.6, pose: .zero, lost: (DockOrientation(y: 0.2), 0.3), limits: limits, camera: camera, home: .zero)
        guard case .point(let ahead, nil) = first else { Issue.record("\(first)"); return }
        #expect(abs(ahead.y - (0.2 + 0.5 * camera.horizontalFieldOfView)) < 1e-9)
        // Then a sweep at the search speed: the top row first, from the nearer pan end (±π around
        // home on a 360° dock).
        let sweep = search.goal(now: 2.5, pose: DockOrientation(y: 0.5), lost: nil, limits: limits, camera: camera, home: .zero)
        guard case .point(let end, let speed?) = sweep else { Issue.record("\(sweep)"); return }
        #expect(end.y == .pi && end.x == limits.pitch.range.lowerBound, "\(end)")
        #expect(abs(speed - 0.8 * camera.horizontalFieldOfView) < 1e-9)
        // Reaching it, the other end of the same row; after the search time, home.
        let next = search.goal(now: 8, pose: end, lost: nil, limits: limits, camera: camera, home: .zero)
        #expect(next == .point(DockOrientation(x: end.x, y: -.pi), speed: speed))
        #expect(search.goal(now: 31, pose: .zero, lost: nil, limits: limits, camera: camera, home: .zero) == .home && search.hasGivenUp)
        search.reset()
        #expect(search.goal(now: 40, pose: .zero, lost: nil, limits: limits, camera: camera, home: .zero) == .hold, "nobody seen yet: a moment to look")
    }

    @Test func sweepRowsStayInTheTiltRange() {
        var limits = DockLimits.standard
        limits.yaw.range = -0.4...0.4
        limits.pitch.range = -0.1...0.1
        let rows = SubjectSearch.sweep(from: .zero, limits: limits, camera: .webcam, home: .zero, params: .init())
        #expect(rows.allSatisfy { limits.pitch.range.contains($0.x) && limits.yaw.range.contains($0.y) })
        #expect(rows.count == 2, "a tilt range the view covers from one row: one row, \(rows)")
        let standard = SubjectSearch.sweep(from: .zero, limits: .standard, camera: .webcam, home: .zero, params: .init())
        let pitch = DockLimits.standard.pitch.range, height = CameraModel.webcam.verticalFieldOfView
        var tiers: [Double] = []
        for waypoint in standard where tiers.last != waypoint.x { tiers.append(waypoint.x) }
        #expect(standard.allSatisfy { pitch.contains($0.x) })
        // From the top down, each row panned end to end, the tiers no more than 0.8 views apart and
        // reaching both ends of the tilt range: everything the dock can see is seen.
        #expect(tiers == tiers.sorted() && tiers.count >= 3 && standard.count == 2 * tiers.count, "\(tiers)")
        #expect(tiers.first == pitch.lowerBound && tiers.last == pitch.upperBound && tiers.contains(0), "\(tiers)")
        #expect(zip(tiers, tiers.dropFirst()).allSatisfy { $1 - $0 <= 0.8 * height + 1e-9 }, "\(tiers)")
    }

    @Test func dockAddressesAreReadOrRefusedWithTheList() throws {
        #expect(try DockAddress("-") == .commandStream && DockAddress("sim") == .simulator)
        #expect(try DockAddress("unix:/tmp/d.sock") == .socket(path: "/tmp/d.sock"))
        #expect(try DockAddress("visca-udp:10.0.0.2:52381") == .device("visca-udp:10.0.0.2:52381"))
        #expect(try DockAddress("uvc:/dev/video2").isLive && !DockAddress("sim").isLive)
        for bad in ["", "unix:", "tcp:host", "uvc:", "simulator"] {
            #expect(throws: DockError.self) { try DockAddress(bad) }
        }
    }
}
