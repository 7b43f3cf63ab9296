import DockTrackCore
import DockTrackFraming
import DockTrackSystem
import Foundation

/// The one frame loop: frame -> perception -> framer -> dock. `track`, `simulate`, the step
/// response and `bench` all run it; they differ only in the dock and in how subjects are
/// perceived.
///
/// For each frame: the dock is asked where it pointed when the frame was captured; perception
/// gets the pose the camera looked from (that pose when the camera sits on the dock, the home
/// pose for a fixed recording) and returns the ranked subjects; at the command time (`latency`
/// after the capture, or the clock's present time for a live dock) the framing controller
/// turns them into a command, against the pose the dock will have when the command takes
/// effect (the dock's own latency later), and the dock takes it.
public struct FrameLoop<F: Framer, D: Dock> {
    public var controller: F
    public var dock: D
    /// Whether the camera moves with the dock (a camera on a dock, the virtual camera of
    /// `simulate`); `false` for a recorded video, whose camera stood at the home pose.
    public var cameraOnDock: Bool
    /// Seconds from a frame's capture to its command reaching the dock (a simulated delay).
    public var latency: Double
    /// The frame clock's present time, for a dock on the real clock (a device, another
    /// process): commands are issued then, not at the capture time plus `latency`.
    public var clock: (@Sendable () -> Double)?
    /// Where the controller's trace goes (``ControlTrace``), if anywhere.
    package let trace: LineOutput?
    /// Whether the framing controller drives the dock (DockKit's system tracking). Off, the
    /// subjects are still perceived and reported, and the dock moves only as told from outside
    /// (``TrackControl``).
    public var systemTracking = true
    /// Custom tracking (system tracking off): subjects from a caller's own observations and
    /// when they were seen; the controller frames them while they are under half a second old.
    public var customSubjects: (subjects: [TrackedSubject], time: Double)?
    /// For pictures stamped when they arrive (a network camera on the dock): how long before
    /// arrival they were taken, measured as the run goes (``PictureDelay``); each picture is
    /// taken as seen from where the dock pointed then. `nil`: pictures are stamped when taken.
    public var pictureDelay: PictureDelay?

    /// Writes the trace's header when there is a trace.
    package init(controller: F, dock: D, cameraOnDock: Bool, latency: Double = 0, clock: (@Sendable () -> Double)? = nil,
                trace: LineOutput? = nil) throws {
        self.controller = controller
        self.dock = dock
        self.cameraOnDock = cameraOnDock
        self.latency = latency
        self.clock = clock
        self.trace = trace
        try trace?.write(ControlTrace.header)
    }

    /// One frame captured at `time`: `perceive` gets the pose the camera looked from and
    /// returns the subjects it sees, ranked. Errors of `perceive` and of an unreachable dock
    /// end the loop; a dock refusing the command does not (it is in the step).
    public mutating func step(capturedAt time: Double, perceive: (DockOrientation) throws -> [TrackedSubject]) throws -> FrameStep {
        let taken = cameraOnDock ? time - (pictureDelay?.seconds ?? 0) : time
        let atCapture = try dock.motion(at: taken)
        let cameraPose = cameraOnDock ? atCapture.position : controller.home
        let subjects = try perceive(cameraPose)
        let now = max(time + latency, clock?() ?? -.infinity)
        let atCommand = try dock.motion(at: now + dock.commandLatency)
        var command: DockCommand?
        if systemTracking {
            command = controller.update(subjects: subjects, captureTime: taken, poseAtCapture: cameraPose, pose: atCommand.position, now: now)
        } else if let custom = customSubjects {
            if now - custom.time <= 0.5 {
                command = controller.update(subjects: custom.subjects, captureTime: taken, poseAtCapture: cameraPose, pose: atCommand.position, now: now)
            } else {
                // The caller's observations stopped: so does the dock, once.
                command = .setAngularVelocity(.zero)
                customSubjects = nil
            }
        }
        // The step's aim, read once: the picture delay's observation and the step both take it.
        let aim = controller.aim(at: subjects, seenFrom: cameraPose)
        if cameraOnDock, var delay = pictureDelay {
            if let aim {
                delay.observe(try PictureDelay.candidates.map { try controller.direction(ofPicturePoint: aim.subject, seenFrom: dock.motion(at: time - $0).position) },
                              at: time)
            } else {
                delay.lost()
            }
            pictureDelay = delay
        }
        var refusal: DockError?
        do {
            if let command { try dock.perform(command, at: now) }
        } catch let error as DockError {
            refusal = error
        }
        let step = FrameStep(time: time, atCapture: atCapture, cameraPose: cameraPose, atCommand: atCommand, subjects: subjects,
                             command: command, refusal: refusal, state: controller.state, target: controller.target,
                             aim: aim)
        try trace?.write(ControlTrace.line(step))
        return step
    }
}

/// What one turn of the frame loop did.
public struct FrameStep {
    /// The frame's capture time.
    public var time: Double
    /// The dock's motion when the frame was captured.
    public var atCapture: MotionState
    /// The pose the camera looked from (see ``FrameLoop/cameraOnDock``).
    public var cameraPose: DockOrientation
    /// The dock's motion when the command takes effect.
    public var atCommand: MotionState
    public var subjects: [TrackedSubject]
    /// What the dock was sent, if anything.
    public var command: DockCommand?
    /// Why the dock refused the command, when it did.
    public var refusal: DockError?
    public var state: FramingController.State
    /// The pose the controller aimed for, when it aimed for one.
    public var target: DockOrientation?
    /// The point of the picture brought to the framing target, and that target.
    public var aim: (subject: (x: Double, y: Double), target: (x: Double, y: Double))?
}

/// The controller's trace: one tab-separated line per frame, angles in radians.
public enum ControlTrace {
    public static let header = "time\tpan\ttilt\ttarget_pan\ttarget_tilt\tcommand_pan\tcommand_tilt\tstate"

    /// The line of a step: the dock's pose at capture, the target, the command, the state.
    public static func line(_ step: FrameStep) -> String {
        line(time: step.time, pose: step.atCapture.position, target: step.target, command: step.command?.velocity, state: step.state)
    }

    /// Command columns are empty for frames without a velocity command.
    public static func line(time: Double, pose: DockOrientation, target: DockOrientation?, command: AngularVelocity?,
                            state: FramingController.State) -> String {
        func columns(_ v: DockVector?) -> String { v.map { String(format: "%.5f\t%.5f\t", $0.y, $0.x) } ?? "\t\t" }
        return String(format: "%.3f\t%.5f\t%.5f\t", time, pose.y, pose.x) + columns(target) + columns(command) + state.rawValue
    }
}
