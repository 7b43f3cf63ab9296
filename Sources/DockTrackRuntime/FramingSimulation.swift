import DockTrackCore
import DockTrackFraming
import DockTrackDock
import Foundation

/// A closed loop with a camera that moves with the dock: people at fixed or moving directions
/// in the world, a camera on a dock (a ``SimulatedDock`` by default), a ``FramingController``
/// turning what the camera sees into commands (the ``FrameLoop``, with people drawn where the
/// camera, at the pose the dock reports, would see them instead of detected). On the
/// simulated clock (``run(people:duration:present:)``) commands reach the dock `latency`
/// seconds after each capture; on the real clock (``runLive(people:duration:clock:)``, for a
/// dock in another process or a device) frames are captured as time passes and commands go
/// out at once.
package struct FramingSimulation {
    /// A person in the world: the direction of their face (radians, dock axes) over time, and
    /// the size of the face in the picture.
    package struct Person: Sendable {
        package var direction: @Sendable (Double) -> DockOrientation
        /// Face height as a fraction of the picture's height.
        package var faceSize: Double
        package var id: UUID

        package init(id: UUID = UUID(), faceSize: Double = 0.15, direction: @escaping @Sendable (Double) -> DockOrientation) {
            self.id = id
            self.faceSize = faceSize
            self.direction = direction
        }
    }

    /// One frame of the loop.
    package struct Sample: Sendable {
        package var time: Double
        package var pose: DockOrientation
        /// The velocity commanded, or the dock's own when no velocity was commanded.
        package var command: AngularVelocity
        package var state: FramingController.State
        /// Where each person appeared in the picture (unit coordinates, lower-left origin).
        package var seen: [UUID: (x: Double, y: Double)]
    }

    package var controller: FramingController
    package var dock: AnyDock
    package var frameRate = 30.0
    /// Seconds from capture to the command reaching the dock (simulated clock).
    package var latency = 0.05

    package init(controller: FramingController, dock: any Dock = SimulatedDock()) {
        self.controller = controller
        self.dock = AnyDock(dock)
    }

    /// Runs from t = 0 to `duration` seconds on the simulated clock; `present(t)` says who is in
    /// the scene at t (all by default). For a dock that cannot fail (the simulator).
    package mutating func run(people: [Person], duration: Double, present: @Sendable (Double) -> [UUID]? = { _ in nil }) -> [Sample] {
        try! run(people: people, duration: duration, clock: nil, present: present)
    }

    /// Runs for `duration` seconds of `clock` (the dock's frame clock, seconds), a frame every
    /// 1/`frameRate` seconds as time passes (a late frame is captured when it can be).
    package mutating func runLive(people: [Person], duration: Double, clock: @escaping @Sendable () -> Double) throws -> [Sample] {
        try run(people: people, duration: duration, clock: clock, present: { _ in nil })
    }

    private mutating func run(people: [Person], duration: Double, clock: (@Sendable () -> Double)?,
                              present: @Sendable (Double) -> [UUID]?) throws -> [Sample] {
        var samples: [Sample] = []
        let camera = controller.params.camera
        let start = clock?() ?? 0
        let pacer = clock.map { RealTimePacer(clock: SleepingClock(now: $0, sleep: SleepingClock.monotonic.sleep), startingAt: start) }
        var driver = RunDriver(loop: try FrameLoop(controller: controller, dock: dock, cameraOnDock: true, latency: clock == nil ? latency : 0,
                                                   clock: clock), pacer: pacer)
        // The simulation's dock and controller are handed back as they are, not stopped: a
        // caller runs on from where it left them.
        defer { (controller, dock) = (driver.loop.controller, driver.loop.dock) }
        let frames = Int(duration * frameRate)
        for k in 0...frames {
            var seen: [UUID: (x: Double, y: Double)] = [:]
            let step = try driver.step(recordedAt: start + Double(k) / frameRate) { capture, poseAtCapture in
                let inScene = present(capture - start)
                var subjects: [TrackedSubject] = []
                for (rank, person) in people.enumerated() where inScene?.contains(person.id) ?? true {
                    let p = camera.point(at: person.direction(capture - start) - poseAtCapture)
                    guard p.x > 0, p.x < 1, p.y > 0, p.y < 1 else { continue }
                    seen[person.id] = p
                    let h = person.faceSize, w = h * 0.75 * camera.horizontalAspectCorrection
                    let face = UnitRect(x: p.x - w / 2, y: p.y - h / 2, width: w, height: h)
                    let body = UnitRect(x: p.x - 1.5 * w, y: max(0, p.y - 4 * h), width: 3 * w, height: min(p.y - h / 2, 3.5 * h) + h)
                    subjects.append(TrackedSubject(id: person.id, kind: .person, rect: face.union(body), faceRect: face, saliencyRank: rank + 1))
                }
                return subjects
            }
            samples.append(Sample(time: step.time - start, pose: step.cameraPose, command: step.command?.velocity ?? step.atCommand.velocity,
                                  state: step.state, seen: seen))
        }
        return samples
    }
}

extension CameraModel {
    /// Width over height of one unit of picture: a face 0.75 as wide as tall in pixels is
    /// this much narrower in unit coordinates of a 4:3 picture.
    var horizontalAspectCorrection: Double { tan(verticalFieldOfView / 2) / tan(horizontalFieldOfView / 2) }
}

/// The step test: a person stands still, then is suddenly `step` radians to the side; how fast
/// and how cleanly the dock follows.
package struct StepResponse: Sendable, Equatable {
    /// Seconds from the step until the yaw stays within `tolerance` of its final value.
    package var settleTime: Double
    /// Radians past the final yaw at the worst moment.
    package var overshoot: Double
    /// Velocity commands per second.
    package var commandRate: Double
    /// Radians between the final yaw and the person's direction.
    package var finalError: Double
    /// The highest yaw speed commanded (rad/s).
    package var peakSpeed: Double

    /// Runs the step test on the simulated clock.
    package static func measure(step: Double = 0.4, at stepTime: Double = 0.5, duration: Double = 5, tolerance: Double = 0.03,
                               params: FramingController.Params = .init(), latency: Double = 0.05) -> StepResponse {
        var simulation = FramingSimulation(controller: FramingController(params: params))
        simulation.latency = latency
        let faceLevel = params.camera.angles(toward: 0.5, 0.6).x
        let person = FramingSimulation.Person { t in DockOrientation(x: faceLevel, y: t < stepTime ? 0 : step, z: 0) }
        let samples = simulation.run(people: [person], duration: duration)
        let finalYaw = samples.last!.pose.y
        let after = samples.filter { $0.time >= stepTime }
        let lastOutside = after.last { abs($0.pose.y - finalYaw) > tolerance }
        return StepResponse(
            settleTime: (lastOutside?.time ?? stepTime) - stepTime + 1 / simulation.frameRate,
            overshoot: max(0, (after.map { $0.pose.y * (step < 0 ? -1 : 1) }.max() ?? 0) - abs(step)),
            commandRate: Double(samples.count) / duration,
            finalError: abs(finalYaw - step),
            peakSpeed: samples.map { abs($0.command.y) }.max() ?? 0)
    }
}
