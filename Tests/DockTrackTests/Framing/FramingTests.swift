import DockTrack
import Foundation
import Testing

/// The framing controller and the simulated dock on the simulated clock: each test runs
/// seconds of motion in milliseconds, the same way every time.
@Suite(.onTestThreads) struct FramingTests {
    let camera = CameraModel.webcam
    /// The pitch at which a face appears at the controller's face height when the dock is level.
    var faceLevel: Double { camera.angles(toward: 0.5, 0.6).x }

    @Test func cameraModelRoundTrips() {
        let angles = camera.angles(toward: 0.8, 0.3)
        #expect(angles.y > 0 && angles.x > 0, "right of centre pans right; below centre tilts down")
        let back = camera.point(at: angles)
        #expect(abs(back.x - 0.8) < 1e-12 && abs(back.y - 0.3) < 1e-12)
        #expect(abs(camera.angles(toward: 1, 0.5).y - 35 * .pi / 180) < 1e-12)
        // A whole turn further is the same direction.
        let turned = camera.point(at: DockOrientation(x: angles.x, y: angles.y + 2 * .pi, z: 0))
        #expect(abs(turned.x - 0.8) < 1e-9 && abs(turned.y - 0.3) < 1e-9)
    }

    /// A direction beside or behind the camera is never projected back into the picture (tan of
    /// 180.4° is tan of 0.4°): it lies far beyond the edge on its own side.
    @Test(arguments: [0.5, 1.4, 1.6, 2.5, 3.13, 3.15, 4.0, -1.6, -3.1])
    func aDirectionBehindTheCameraIsOutsideItsPicture(yaw: Double) {
        let point = camera.point(at: DockOrientation(x: 0, y: yaw, z: 0))
        let short = remainder(yaw, 2 * .pi)
        if abs(short) < camera.horizontalFieldOfView / 2 {
            #expect((0...1).contains(point.x), "\(yaw) rad: at \(point.x)")
        } else {
            #expect(short > 0 ? point.x > 1 : point.x < 0, "\(yaw) rad: at \(point.x)")
        }
        if abs(short) >= .pi / 2 { #expect(abs(point.x - 0.5) > 50, "\(yaw) rad behind the camera: at \(point.x)") }
        let up = camera.point(at: DockOrientation(x: yaw, y: 0, z: 0))
        if abs(short) >= .pi / 2 { #expect(short > 0 ? up.y < -50 : up.y > 50, "pitch \(yaw) rad: at \(up.y)") }
    }

    @Test func aStepSettlesQuicklyWithoutOvershoot() {
        let response = StepResponse.measure(step: 0.4)
        #expect(response.settleTime < 1.5, "\(response)")
        #expect(response.overshoot < 0.02, "\(response)")
        #expect(response.finalError < 0.03, "\(response)")
        #expect(response.peakSpeed <= DockLimits.standard.yaw.maximumSpeed)
        let left = StepResponse.measure(step: -0.4)
        #expect(left.settleTime < 1.5 && left.overshoot < 0.02, "\(left)")
    }

    @Test func jitterInsideTheDeadBandCausesNoMotion() {
        var simulation = FramingSimulation(controller: FramingController())
        let level = faceLevel
        // The face wobbles by up to 0.012 rad (about 1/100 of the picture) around the centre.
        let person = FramingSimulation.Person { t in DockOrientation(x: level + 0.01 * sin(17 * t), y: 0.012 * sin(23 * t), z: 0) }
        let samples = simulation.run(people: [person], duration: 5)
        let travelled = samples.map { abs($0.pose.y) + abs($0.pose.x) }.max()!
        #expect(travelled < 0.002, "dock moved \(travelled) rad")
        #expect(samples.allSatisfy { $0.command == .zero })
    }

    @Test(arguments: [(FramingMode.center, 0.5), (.left, 1.0 / 3), (.right, 2.0 / 3)])
    func framingModesPutTheSubjectWhereAsked(mode: FramingMode, expectedX: Double) {
        var params = FramingController.Params()
        params.mode = mode
        var simulation = FramingSimulation(controller: FramingController(params: params))
        let level = faceLevel
        let person = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.3, z: 0) }
        let samples = simulation.run(people: [person], duration: 4)
        let seen = samples.last!.seen[person.id]!
        #expect(abs(seen.x - expectedX) < 0.03, "\(mode): subject at x = \(seen.x)")
        #expect(abs(seen.y - 0.6) < 0.03, "\(mode): face at y = \(seen.y)")
    }

    @Test func theRegionOfInterestMovesTheTargetAndBoundsWhoIsTracked() {
        var params = FramingController.Params()
        // The right half of the picture, upper-left origin as a caller gives it.
        params.regionOfInterest = UnitRect(upperLeftOrigin: UnitRect(x: 0.5, y: 0, width: 0.5, height: 1))
        params.mode = .center
        var simulation = FramingSimulation(controller: FramingController(params: params))
        let level = faceLevel
        // Someone in the region is framed at its centre.
        let person = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.1, z: 0) }
        let seen = simulation.run(people: [person], duration: 4).last!.seen[person.id]!
        #expect(abs(seen.x - 0.75) < 0.03, "subject at x = \(seen.x)")
        // Tracking is constrained to the region (DockKit's): someone wholly outside it is not
        // followed, and the dock stays where it points.
        var outside = FramingSimulation(controller: FramingController(params: params))
        let passerby = FramingSimulation.Person { _ in DockOrientation(x: level, y: -0.2, z: 0) }
        let frames = outside.run(people: [passerby], duration: 4)
        let first = frames.first!.seen[passerby.id]!, last = frames.last!.seen[passerby.id]!
        #expect(first.x < 0.45 && abs(last.x - first.x) < 0.01, "the one outside the region stays at x = \(first.x) -> \(last.x)")
    }

    @Test func aGroupThatFitsStaysInFrame() {
        let level = faceLevel
        let primary = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.35, z: 0) }
        let friend = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.05, z: 0) }
        var automatic = FramingSimulation(controller: FramingController())
        let group = automatic.run(people: [primary, friend], duration: 4).last!.seen
        #expect(group.count == 2)
        #expect(group.values.allSatisfy { $0.x > 0.1 && $0.x < 0.9 }, "\(group)")
        let middle = (group[primary.id]!.x + group[friend.id]!.x) / 2
        #expect(abs(middle - 0.5) < 0.04, "the group is centred: \(middle)")
        // A group too wide to fit: the primary subject is framed alone.
        let far = FramingSimulation.Person { _ in DockOrientation(x: level, y: -0.6, z: 0) }
        var wide = FramingSimulation(controller: FramingController())
        let alone = wide.run(people: [primary, far], duration: 4).last!.seen
        #expect(abs(alone[primary.id]!.x - 0.5) < 0.03)
    }

    @Test func limitsHold() {
        var params = FramingController.Params()
        params.limits.pitch = AxisLimits(range: -0.2...0.2, maximumSpeed: 0.5, maximumAcceleration: 4)
        params.limits.yaw = AxisLimits(range: -0.3...0.3, maximumSpeed: 0.8, maximumAcceleration: 4)
        var simulation = FramingSimulation(controller: FramingController(params: params), dock: SimulatedDock(limits: params.limits))
        // Someone high up and to the right, in view but beyond what the dock can reach.
        let person = FramingSimulation.Person { _ in DockOrientation(x: -0.4, y: 0.55, z: 0) }
        let samples = simulation.run(people: [person], duration: 6)
        #expect(samples.allSatisfy { abs($0.command.x) <= 0.5 + 1e-9 && abs($0.command.y) <= 0.8 + 1e-9 })
        #expect(samples.allSatisfy { abs($0.pose.x) <= 0.2 + 1e-9 && abs($0.pose.y) <= 0.3 + 1e-9 })
        #expect(abs(samples.last!.pose.y - 0.3) < 0.01 && abs(samples.last!.pose.x + 0.2) < 0.01, "waits at the ends: \(samples.last!.pose)")
    }

    /// A dock that pans without end, turned three and a half turns by hand: going home takes
    /// the short way round (160 degrees on), not back through every turn.
    @Test func aDockTurnedManyTimesGoesHomeTheShortWay() {
        var params = FramingController.Params()
        params.homeAfter = 0
        #expect(params.limits.yaw.range.upperBound == .infinity)
        var controller = FramingController(params: params)
        let turned = DockOrientation(x: 0, y: (3 * 360 + 200) * Double.pi / 180, z: 0)
        var dock = SimulatedDock(limits: params.limits, position: turned)
        var t = 0.0
        var commands: [Double] = []
        for _ in 0..<200 {
            t += 0.05
            let pose = dock.motionState.position
            if let command = controller.update(subjects: [], captureTime: t, poseAtCapture: pose, pose: pose, now: t) {
                _ = try? dock.apply(command, at: t)
                if let v = command.velocity { commands.append(v.y) }
            }
            dock.advance(to: t)
        }
        #expect(commands.contains { $0 > 0.1 } && !commands.contains { $0 < -0.1 }, "forward 160 degrees: \(commands.prefix(10))")
        let end = dock.motionState.position.y * 180 / .pi
        #expect(abs(end - 4 * 360) < 2, "at home, four turns on: \(end) degrees")
    }

    @Test func aLostSubjectLeadsToHoldThenHome() {
        var params = FramingController.Params()
        params.homeAfter = 3
        var simulation = FramingSimulation(controller: FramingController(params: params))
        let level = faceLevel
        let person = FramingSimulation.Person { _ in DockOrientation(x: level, y: 0.5, z: 0) }
        // In the scene for 2 s, then gone.
        let samples = simulation.run(people: [person], duration: 9) { t in t < 2 ? nil : [] }
        let atLoss = samples.first { $0.time >= 2 }!.pose
        #expect(abs(atLoss.y - 0.5) < 0.05, "tracking reached the person: \(atLoss)")
        let holding = samples.filter { $0.time > 2.4 && $0.time < 4.9 }
        #expect(holding.allSatisfy { $0.state == .holding && abs($0.pose.y - atLoss.y) < 0.05 }, "holds where it was")
        #expect(samples.contains { $0.state == .returningHome })
        let end = samples.last!.pose
        #expect(abs(end.y) < 0.03 && abs(end.x) < 0.03, "home again: \(end)")
    }

    @Test func orientationCommandsAndAnimationsAreLimitedToTwoPerSecond() throws {
        var dock = SimulatedDock()
        try dock.apply(.setOrientation(DockOrientation(y: 0.1), duration: 0.5, relative: false), at: 0)
        try dock.apply(.setOrientation(DockOrientation(y: 0.2), duration: 0.5, relative: false), at: 0.3)
        #expect(throws: DockError.rateTooHigh(limit: 2)) {
            try dock.apply(.setOrientation(DockOrientation(y: 0.3), duration: 0.5, relative: false), at: 0.6)
        }
        try dock.apply(.setOrientation(DockOrientation(y: 0.3), duration: 0.5, relative: false), at: 1.05)
        try dock.apply(.animate(.yes), at: 2)
        try dock.apply(.animate(.no), at: 2.1)
        #expect(throws: DockError.rateTooHigh(limit: 2)) { try dock.apply(.animate(.kapow), at: 2.2) }
        // Velocity commands come at the control rate and are not limited.
        for k in 0..<30 { try dock.apply(.setAngularVelocity(AngularVelocity(y: 0.1)), at: 5 + Double(k) / 30) }
    }

    @Test func orientationCommandsReachTheirTargetWithinLimits() throws {
        var dock = SimulatedDock()
        try dock.apply(.setOrientation(DockOrientation(x: 0.2, y: -1.0), duration: 1, relative: false), at: 0)
        dock.advance(to: 3)
        #expect(abs(dock.position.y + 1.0) < 1e-3 && abs(dock.position.x - 0.2) < 1e-3)
        try dock.apply(.setOrientation(DockOrientation(x: 5, y: 0.5), duration: 0, relative: true), at: 3)
        dock.advance(to: 6)
        #expect(abs(dock.position.x - DockLimits.standard.pitch.range.upperBound) < 1e-9, "pitch stops at its limit")
        #expect(abs(dock.position.y + 0.5) < 1e-3)
        #expect(throws: DockError.notCapable("roll")) { try dock.apply(.setAngularVelocity(AngularVelocity(z: 1)), at: 7) }
    }

    /// An orientation with a duration takes that long, both axes together; one too far for its
    /// duration goes as fast as the limits let it and arrives late, never early.
    @Test(arguments: [(0.8, 0.2, 4.0), (-0.3, -0.05, 1.0), (2.5, 0.4, 0.5)])
    func anOrientationWithADurationArrivesThen(yaw: Double, pitch: Double, duration: Double) throws {
        var dock = SimulatedDock()
        try dock.apply(.setOrientation(DockOrientation(x: pitch, y: yaw), duration: duration, relative: false), at: 1)
        var arrived: [DockAxis: Double] = [:]
        var t = 1.0
        while t < 10 && arrived.count < 2 {
            t += 0.01
            dock.advance(to: t)
            if arrived[.yaw] == nil && abs(dock.position.y - yaw) < 1e-3 { arrived[.yaw] = t - 1 }
            if arrived[.pitch] == nil && abs(dock.position.x - pitch) < 1e-3 { arrived[.pitch] = t - 1 }
        }
        let limits = DockLimits.standard
        // The fastest the limits allow: a triangle or, capped, a trapezoid at the top speed.
        func fastest(_ d: Double, _ l: AxisLimits) -> Double {
            let v = min(l.maximumSpeed, (abs(d) * l.maximumAcceleration).squareRoot())
            return abs(d) / v + v / l.maximumAcceleration
        }
        for (axis, distance) in [(DockAxis.yaw, yaw), (.pitch, pitch)] {
            let took = try #require(arrived[axis], "\(axis) never arrived")
            let expected = max(duration, fastest(distance, limits[axis]))
            #expect(abs(took - expected) < 0.1, "\(axis): \(took) s for \(duration) s asked, \(expected) s possible")
        }
    }

    @Test(arguments: DockAnimation.allCases)
    func animationsStartAndEndAtTheCurrentPose(animation: DockAnimation) throws {
        var dock = SimulatedDock(position: DockOrientation(x: 0.1, y: 0.7))
        try dock.apply(.animate(animation), at: 1)
        var farthest = 0.0
        for k in 1...Int(animation.duration * 100) {
            dock.advance(to: 1 + Double(k) / 100)
            farthest = max(farthest, abs(dock.position.x - 0.1) + abs(dock.position.y - 0.7))
        }
        dock.advance(to: 1 + animation.duration + 0.1)
        #expect(farthest > 0.1, "\(animation) hardly moved")
        #expect(abs(dock.position.x - 0.1) < 1e-3 && abs(dock.position.y - 0.7) < 1e-3, "\(animation) ended at \(dock.position)")
        #expect(!dock.isAnimating)
    }

    @Test func kapowSnapsAndOscillatesBack() {
        let path = stride(from: 0.0, to: DockAnimation.kapow.duration, by: 0.01).map { DockAnimation.kapow.offset(at: $0).x }
        #expect(path.max()! > 0.2)
        let crossings = zip(path, path.dropFirst()).filter { $0.0 > 0 && $0.1 <= 0 || $0.0 < 0 && $0.1 >= 0 }.count
        #expect(crossings >= 3, "oscillates: \(crossings) zero crossings")
    }

    @Test func observationRatesOutsideTenToThirtyPerSecondAreErrors() throws {
        var ok = ObservationRateMonitor()
        for k in 0..<60 { try ok.record(at: Double(k) / 20) }
        var slow = ObservationRateMonitor()
        #expect(throws: DockError.rateTooLow(limit: 10)) { for k in 0..<20 { try slow.record(at: Double(k) / 5) } }
        var fast = ObservationRateMonitor()
        #expect(throws: DockError.rateTooHigh(limit: 30)) { for k in 0..<120 { try fast.record(at: Double(k) / 60) } }
        var gap = ObservationRateMonitor()
        try gap.record(at: 0)
        #expect(throws: DockError.rateTooLow(limit: 10)) { try gap.record(at: 2) }
        // One a second: the first has nothing to be judged against, every one after is too slow.
        var once = ObservationRateMonitor()
        #expect(try once.record(at: 0) == false)
        for k in 1..<5 { #expect(throws: DockError.rateTooLow(limit: 10)) { try once.record(at: Double(k)) } }
        // A stream begun again after a pause of more than 2 s: its first is not judged.
        #expect(try once.record(at: 8) == false)
        var good = ObservationRateMonitor()
        #expect(try good.record(at: 0) == false && good.record(at: 0.05) == true && good.record(at: 0.2) == true)
    }

    @Test func commandsRoundTripThroughJSON() throws {
        let commands: [DockCommand] = [
            .setAngularVelocity(AngularVelocity(x: 0.1, y: -0.25, z: 0)),
            .setOrientation(DockOrientation(x: 0, y: 1.5, z: 0), duration: 2, relative: true),
            .animate(.kapow), .setSystemTracking(false), .setLimits(.standard),
        ]
        for command in commands {
            let line = command.jsonLine(time: 1.5)
            let back = try JSONDecoder().decode(TimedDockCommand.self, from: Data(line.utf8))
            #expect(back == TimedDockCommand(time: 1.5, command: command), "\(line)")
        }
        #expect(commands[0].jsonLine(time: 0) == #"{"time":0.0,"command":"setAngularVelocity","velocity":{"x":0.1,"y":-0.25,"z":0.0}}"#)
    }
}

/// The framing side of the built tool.
@Suite(.onTestThreads) struct FramingCommandLineTests {
    @Test func trackPrintsOneCommandPerFrame() throws {
        let run = try ToolRun.docktrack(["track", Fixtures.sample("messi5.jpg"), "-d", "dnn-face", "--no-face-cues"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 2, "the frame's command and the stop at the end")
        let commands = try run.lines.map { try JSONDecoder().decode(TimedDockCommand.self, from: Data($0.utf8)) }
        #expect(commands.allSatisfy { $0.command.name == "setAngularVelocity" })
    }

    @Test func customTrackingFollowsTheCallersObservationsAndReportsBadRates() throws {
        let folder = try Fixtures.temporaryFolder()
        // A person right of centre, fed at 20 per second for 2 s, then at 2 per second.
        var lines: [String] = []
        var times = (0..<40).map { Double($0) / 20 }
        times += (1...4).map { 2 + Double($0) / 2 }
        for (i, t) in times.enumerated() {
            let record = DetectionRecord(frame: i, time: t, size: ImageSize(width: 640, height: 480), observations: [
                Observation(type: .humanFace, rect: UnitRect(x: 0.7, y: 0.55, width: 0.1, height: 0.13), confidence: 0.9)])
            lines.append(record.jsonLine)
        }
        lines.insert("this is not json", at: 5)
        let input = folder.appendingPathComponent("observations.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["track", "--observations", input.path])
        #expect(run.status == 0)
        #expect(run.lines.count == times.count + 1, "one command per observation line, and the stop at the end")
        let yaw = try run.lines.map { line -> Double in
            guard case .setAngularVelocity(let v) = try JSONDecoder().decode(TimedDockCommand.self, from: Data(line.utf8)).command else { return .nan }
            return v.y
        }
        #expect(yaw[10...30].allSatisfy { $0 > 0 }, "pans right towards the person")
        #expect(yaw[40...].allSatisfy { $0 == 0 }, "at 2 a second the dock is stopped, not swung: \(yaw[40...])")
        #expect(run.stderr.contains("observations line 6: not an observation line"))
        #expect(run.stderr.contains("rate too low: at least 10 per second") && run.stderr.contains("not framed"))
        #expect(!run.stderr.contains("rate too high"))
    }

    /// An app's own object observations (custom tracking) are followed as objects and framed: the
    /// person tracker once dropped them (no subject, no motion, no error).
    @Test func customTrackingOfObjectsDrivesTheDockTowardTheObject() throws {
        let input = try Fixtures.observationsFile([
            Observation(type: .object, rect: UnitRect(x: 0.72, y: 0.4, width: 0.1, height: 0.1), confidence: 0.9)], count: 60)
        let states = input.deletingLastPathComponent().appendingPathComponent("states.jsonl").path
        let run = try ToolRun.docktrack(["track", "--observations", input.path, "--states", states, "--sequential-identifiers"])
        #expect(run.status == 0, "\(run.stderr)")
        let yaw = try run.lines.map { line -> Double in
            guard case .setAngularVelocity(let v) = try JSONDecoder().decode(TimedDockCommand.self, from: Data(line.utf8)).command else { return .nan }
            return v.y
        }
        #expect(yaw.count == 61 && yaw[10..<60].allSatisfy { $0 > 0 } && yaw[60] == 0, "pans toward the object, then stops: \(yaw)")
        let last = try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.contains("\"kind\":\"object\"") && last.contains("\"saliencyRank\":1"), "\(last)")
    }

    @Test func stepResponsePrintsItsMetrics() throws {
        let run = try ToolRun.docktrack(["step-response", "--step", "20"])
        #expect(run.status == 0)
        let metrics = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as! [String: Double]
        #expect(metrics["settleSeconds"]! < 1.5 && metrics["overshootDegrees"]! < 1)
        #expect(metrics["commandsPerSecond"]! > 29)
    }

    @Test func badFramingOptionsAreUsageErrors() throws {
        for arguments in [["--mode", "diagonal"], ["--roi", "0.5,0.5,0.9,0.2"], ["--fov", "0"]] {
            let run = try ToolRun.docktrack(["track", Fixtures.sample("messi5.jpg")] + arguments)
            #expect(run.status == 64, "\(arguments)")
        }
        let neither = try ToolRun.docktrack(["track"])
        #expect(neither.status == 64 && neither.stderr.contains("give one input: a video PATH, --camera or --observations"))
    }
}

/// The closed loop over real video: a virtual camera on the simulated dock.
@Suite(.onTestThreads) struct SimulateTests {
    @Test func theDockKeepsAWalkingPersonInTheTargetZone() throws {
        let run = try ToolRun.docktrack(["simulate", Fixtures.sample("vtest.avi"), "--end", "150", "--no-face-cues", "-d", "hog-body"])
        #expect(run.status == 0, "\(run.stderr)")
        let metrics = try JSONSerialization.jsonObject(with: Data(try #require(run.lines.last).utf8)) as! [String: Double]
        #expect(metrics["frames"] == 150)
        #expect(metrics["framesWithSubject"]! >= 140)
        #expect(metrics["inTargetZone"]! >= 0.75, "\(metrics)")
        #expect(metrics["overshootDegrees"]! < 3)
    }

    @Test func theVirtualCameraCropsWhereTheDockPoints() throws {
        let scene = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let camera = VirtualCamera(sceneSize: scene.size, zoom: 0.5)
        let limits = camera.limits()
        // Panned fully right and tilted fully down: the crop sits in the bottom-right corner.
        let corner = camera.crop(at: DockOrientation(x: limits.pitch.range.upperBound, y: limits.yaw.range.upperBound))
        #expect(abs(corner.x + corner.width - Double(scene.width)) < 1 && abs(corner.y + corner.height - Double(scene.height)) < 1)
        let view = try camera.view(of: scene, at: .zero)
        #expect(view.size == camera.viewSize)
    }
}
