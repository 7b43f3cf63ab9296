import DockTrackCore
import DockTrackDetection
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking
import Foundation

/// `simulate` as the library runs it: the closed loop over a recorded scene. A virtual camera
/// sees a part of the scene (a crop that follows the dock's pan and tilt); the pipeline detects
/// and tracks in that view and the loop drives the dock, whose pose moves the view. With a dock
/// in another process (or a device) the view follows the pose that dock reports and the scene
/// plays in real time. The dock is left still however the run ends (``RunEnd``).
package struct SceneSimulationRun {
    /// The scene: a wide recorded video, decoded frame by frame.
    package var scene: any FrameSource
    package var frames: FrameSelection
    package var virtual: VirtualCamera
    package var pipeline: TrackingPipeline
    package var driver: RunDriver<FramingController, AnyDock>
    /// Whether the dock is live: the scene then plays in real time, on `clock`.
    package var liveDock: Bool
    package var clock: @Sendable () -> Double
    /// The view with the subjects and the framing drawn on it.
    package var video: AnnotatedOutput?
    /// A fixed overview camera that guides the dock (``OverviewGuide``), calibrated on the
    /// scene's first frame; `nil`: the dock's camera alone.
    package var overview: SimulatedOverview?
    /// The mapping the overview's calibration found.
    package private(set) var overviewMapping: OverviewMapping?

    /// Opens the dock at `address` for a view of `virtual` (a live dock is asked to keep within
    /// the scene: its ranges narrowed to the scene's, its speeds its own), and the loop around it.
    /// `warn` is told when a live dock does not take the scene's limits.
    package init(scene: any FrameSource, frames: FrameSelection, virtual: VirtualCamera, params: FramingController.Params,
                 address: DockAddress, onvif: ONVIFSettings, latency: Double, pipeline: TrackingPipeline,
                 trace: LineOutput?, video: AnnotatedOutput?, warn: (String) -> Void) throws {
        guard address != .commandStream else { throw TrackSetupError("simulate needs a dock that says where it points: sim, unix:PATH or a device") }
        // A live dock runs on the real clock: the scene plays in real time from `origin`.
        let origin = MonotonicClock.now()
        let clock: @Sendable () -> Double = { MonotonicClock.now() - origin }
        var dock = try address.open(limits: params.limits, home: params.home, clock: clock, onvif: onvif) { _ in }
        if address.isLive {
            var limits = dock.reportedLimits ?? params.limits
            limits.yaw.range = params.limits.yaw.range
            limits.pitch.range = params.limits.pitch.range
            limits.roll = AxisLimits(range: 0...0, maximumSpeed: 0, maximumAcceleration: 0)
            do {
                try dock.perform(.setLimits(limits), at: clock())
                _ = try dock.motion(at: clock())
            } catch let error as DockError {
                warn("the dock did not take the scene's limits (\(error)); the view may leave the scene")
            }
        }
        self.scene = scene
        self.frames = frames
        self.virtual = virtual
        self.pipeline = pipeline
        self.video = video
        self.clock = clock
        liveDock = address.isLive
        // The scene in real time before a live dock: each frame shown when its time comes (a late
        // one at once).
        let loop = try FrameLoop(controller: FramingController(params: params), dock: dock, cameraOnDock: true,
                                 latency: address.isLive ? 0 : latency, clock: address.isLive ? clock : nil, trace: trace)
        driver = RunDriver(loop: loop, pacer: address.isLive ? RealTimePacer(clock: SleepingClock(now: clock, sleep: SleepingClock.monotonic.sleep), startingAt: 0) : nil,
                           dockClock: address.isLive ? clock : nil)
    }

    /// Runs to the scene's end or `stopping` (asked between frames); the framing metrics.
    /// `onFrame` is told the frames done so far.
    package mutating func run(stopping: () -> Bool, onFrame: (Int) -> Void = { _ in },
                              looked: (OverviewCalibration.Look) -> Void = { _ in },
                              calibrated: (OverviewMapping) -> Void = { _ in }) throws -> FramingMetrics {
        var metrics = FramingMetrics()
        let framesPerSecond = scene.info.framesPerSecond ?? 30
        let (virtual, pipeline, video, overview) = (virtual, pipeline, video, overview)
        let params = driver.loop.controller.params
        var guide: OverviewGuide?
        var mapping: OverviewMapping?
        var feed = RunFrames.source(scene, frames)
        defer {
            driver.end { video?.close() }
            if case .source(let read, _) = feed { scene = read }
            if let mapping { overviewMapping = mapping }
        }
        try driver.forEachFrame(of: &feed, stopping: stopping) { driver, item in
            let frame = item.frame
            var view: Frame?
            var overviewView: Frame?
            var overviewSubjects: [TrackedSubject] = []
            if let overview {
                if guide == nil {
                    var rig = SceneCalibrationRig(scene: frame.image, dockCamera: virtual, overview: overview)
                    let found = try OverviewCalibration.calibrate(rig: &rig, camera: params.camera, limits: params.limits, looked: looked)
                    mapping = found
                    calibrated(found)
                    guide = OverviewGuide(mapping: found, camera: params.camera, limits: params.limits)
                }
                overviewView = Frame(index: frame.index, time: frame.time, image: try overview.view(of: frame.image))
                overviewSubjects = try overview.pipeline.process(overviewView!)
            }
            var use: OverviewGuide.Use?
            let step = try driver.step(recordedAt: frame.time) { _, pose in
                view = Frame(index: frame.index, time: frame.time, image: try virtual.view(of: frame.image, at: pose))
                let seen = try pipeline.process(view!)
                guard guide != nil else { return seen }
                let guided = guide!.subjects(seen: seen, in: view!.image, from: pose, overview: overviewSubjects, in: overviewView!.image,
                                             at: frame.time)
                use = guided.use
                return guided.subjects
            }
            metrics.record(time: frame.time, framesPerSecond: framesPerSecond, aim: step.aim, state: step.state,
                           target: step.target, pose: step.cameraPose, panSpeed: step.atCommand.velocity.y,
                           commanded: step.command != nil)
            if let video, let view {
                let canvas = try Canvas(copying: view.image)
                canvas.subjects(step.subjects)
                canvas.framing(regionOfInterest: params.regionOfInterest, target: step.aim?.target, pose: step.cameraPose,
                               state: use == .overview ? "sent by the overview" : step.state.rawValue)
                if let overviewView, let guide {
                    try canvas.inset(try Self.overviewPicture(overviewView.image, subjects: overviewSubjects, guide: guide,
                                                              pose: step.cameraPose, chosen: guide.chosen),
                                     in: UnitRect(x: 0.66, y: 0.66, width: 0.32, height: 0.32))
                }
                try video.write(canvas.image)
            }
            onFrame(metrics.frames)
            return true
        }
        return metrics
    }

    /// The overview with its people (the chosen one in yellow) and the dock's view drawn on it.
    static func overviewPicture(_ image: Image, subjects: [TrackedSubject], guide: OverviewGuide, pose: DockOrientation,
                                chosen: UUID?) throws(OpenCVError) -> Image {
        let canvas = try Canvas(copying: image)
        canvas.overviewPeople(subjects, chosen: chosen)
        // The dock's view: its corners' directions placed in the overview.
        let corners = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)].map { guide.mapping.overviewPoint(at: pose + guide.camera.angles(toward: $0.0, $0.1)) }
        for index in corners.indices {
            canvas.line(from: corners[index], to: corners[(index + 1) % 4], color: .white, thickness: 2)
        }
        return canvas.image
    }
}
