import ArgumentParser
import DockTrack
import Foundation

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Close the loop over a recorded scene: a virtual camera on a simulated dock tracks and frames its people.",
        discussion: """
            The scene (a wide recorded video) spans --scene-fov degrees; the virtual camera sees \
            --zoom of it, a crop that follows the simulated dock's pan and tilt. DockTrack detects \
            and tracks in that view and drives the dock, whose motors answer --latency seconds after \
            each capture, on the scene's own clock. The last line on stdout is the metrics: \
            {"frames":…,"framesWithSubject":…,"inTargetZone":…,"meanError":…,"p95Error":…,"overshootDegrees":…,"commandsPerSecond":…,"inTargetZoneOfAllFrames":…,"longestOutOfZoneSeconds":…} \
            inTargetZone: share of the frames with a primary subject whose anchor (face, or head of \
            the body; in an automatic group shot the group's middle, within 0.13 of the view's width \
            of it) is within 1/6 of the view's width and 1/5 of its height of the framing target \
            (inTargetZoneOfAllFrames: of all frames); longestOutOfZoneSeconds: the longest stretch \
            without it, the start included; errors in units of the view.
            --overview adds a fixed camera that sees the whole scene (or --overview-view of it): the \
            dock's view is found in it by its features at 13 poses (9 fitted, 4 checked; the error is \
            printed), people are tracked in both, and a person the dock's camera does not see is \
            reached at once from where the overview sees them. The annotated view shows the overview \
            in its corner.
            With --dock unix:PATH (or a device) the dock is in another process: the view follows \
            the pose that dock reports, the scene plays in real time, and the whole loop (capture, \
            detection, framing, protocol, motors, motion states, the view that follows) runs across \
            processes as with hardware. Nobody in view: the dock searches (--no-search: it holds, then \
            goes home).
            """
    )

    @Argument(help: "A wide video: the scene.")
    var scene: String

    @OptionGroup var detection: DetectorOptions
    @OptionGroup var frames: FrameOptions
    @OptionGroup(title: "Dock") var dockOptions: DockOptions

    @Option(help: "Degrees the whole scene spans horizontally.")
    var sceneFov = 100.0

    @Option(help: "Share of the scene's width the camera sees (0.2...1).")
    var zoom = 0.55

    @Option(help: "Seconds from capture to the command reaching the simulated dock (--dock sim).")
    var latency = 0.05

    @OptionGroup var framingMode: FramingModeOption
    @OptionGroup var annotate: AnnotateOption
    @OptionGroup var trace: TraceOption

    @Flag(help: "Do not read speaking and looking-at-camera cues from faces (faster).")
    var noFaceCues = false

    @Flag(inversion: .prefixedNo, help: "Tell people apart by re-identification signatures (see track --reidentification), in the dock camera's picture and the overview's.")
    var reidentification = true

    @Flag(help: "Add a fixed overview camera that sees the scene and sends the dock to its person when the dock's camera does not see them (calibrated on the first frame).")
    var overview = false

    @Option(help: ArgumentHelp("The overview camera's view: pan and tilt (degrees, of the scene) and the share of the scene it sees (0.3...1); a negative pan after an equals sign: --overview-view=-5,-3,0.8.", valueName: "PAN,TILT,SHARE"))
    var overviewView: String?

    func validate() throws {
        guard (0.2...1).contains(zoom) else { throw ValidationError("--zoom must be between 0.2 and 1") }
        guard sceneFov >= 1 && sceneFov <= 360 else { throw ValidationError("--scene-fov must be between 1 and 360 degrees, not \(sceneFov)") }
        guard latency >= 0 && latency < 1 else { throw ValidationError("--latency must be between 0 and 1 second") }
        if let overviewView {
            guard Self.parseOverviewView(overviewView) != nil else {
                throw ValidationError("--overview-view takes PAN,TILT,SHARE: degrees within ±90 and a share of the scene in 0.3...1, not '\(overviewView)'")
            }
            guard overview else { throw ValidationError("--overview-view sets the view of --overview; add --overview") }
        }
    }

    static func parseOverviewView(_ text: String) -> (pan: Double, tilt: Double, share: Double)? {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 3, let pan = parts[0], let tilt = parts[1], let share = parts[2],
              abs(pan) <= 90, abs(tilt) <= 90, (0.3...1).contains(share) else { return nil }
        return (pan, tilt, share)
    }

    func run() throws {
        RunInterruption.install()
        try reportingErrors {
            let source = try MediaFile.open(scene, stopping: { RunInterruption.requested })
            guard source.info.kind == .video else {
                throw ToolError("\(scene) is a still image: simulate plays a video scene (the dock turns over time); for one picture use docktrack detect")
            }
            let virtual = VirtualCamera(sceneSize: source.info.size, sceneFieldOfView: sceneFov * .pi / 180, zoom: zoom)
            var params = FramingController.Params()
            params.mode = framingMode.mode
            params.camera = virtual.camera
            params.limits = virtual.limits()
            dockOptions.apply(to: &params, searchByDefault: true)
            let models = ModelStore.locate(models: detection.models, cascades: detection.cascades)
            let pipeline = TrackingPipeline(detector: try detection.makeDetector(),
                                            cues: noFaceCues ? nil : FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models)))
            if reidentification { try pipeline.reidentify(models: models) }
            let video = try annotate.video(size: virtual.viewSize, framesPerSecond: (source.info.framesPerSecond ?? 30) / Double(frames.stride))
            var simulation = try SceneSimulationRun(scene: source, frames: frames.selection, virtual: virtual, params: params,
                                                    address: try dockOptions.address(default: "sim"), onvif: try dockOptions.onvifSettings(),
                                                    latency: latency, pipeline: pipeline, trace: try trace.output(), video: video,
                                                    warn: { printError("docktrack: \($0)") })
            if overview {
                let view = overviewView.flatMap(Self.parseOverviewView) ?? (0, 0, 1)
                let overviewPipeline = TrackingPipeline(detector: try detection.makeDetector(), cues: nil)
                if reidentification { try overviewPipeline.reidentify(models: models) }
                simulation.overview = SimulatedOverview(
                    sceneSize: source.info.size, sceneFieldOfView: sceneFov * .pi / 180, share: view.share,
                    pose: DockOrientation(x: view.tilt * .pi / 180, y: view.pan * .pi / 180, z: 0),
                    pipeline: overviewPipeline)
            }
            var progress = ProgressLine(total: source.info.frameCount)
            defer { progress.finish() }
            var looks: [OverviewCalibration.Look] = []
            let metrics = try simulation.run(stopping: { RunInterruption.requested }, onFrame: { progress.update(done: $0) },
                                             looked: { looks.append($0) }, calibrated: { mapping in
                let found = looks.filter { $0.homography != nil }.map(\.inliers)
                printError(String(format: "docktrack: overview calibrated: the dock's view found in the overview at %d of %d poses (%d to %d features agreeing); %.2f° off on average, %.2f° at most, on the poses it did not fit",
                                  found.count, looks.count, found.min() ?? 0, found.max() ?? 0,
                                  mapping.checkedErrorDegrees.mean, mapping.checkedErrorDegrees.largest))
            })
            progress.finish()
            try printLine(metrics.jsonLine)
            printError(metrics.firstInZone.map { String(format: "docktrack: first subject in the target zone at %.1f s", $0) }
                       ?? "docktrack: nobody was framed")
            if let video { printError("docktrack: annotated view written to \(video.path)") }
            try exitIfInterrupted()
        }
    }
}
