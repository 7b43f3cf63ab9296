import DockTrackAudio
import DockTrackCore
import DockTrackDetection
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking
import Foundation

/// A part of a run that could not be opened, in words for the person who asked for it.
public struct TrackSetupError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension TrackSession {
    /// Opens everything `configuration` asks for (the source, the pipeline, the dock, the
    /// control server, the outputs) and makes the session that runs them. `notes` gets what a
    /// person watching the run is told (a camera opened or lost, an audio route changed, the
    /// control server's lines); `commands` the command stream's lines when the dock is `-`.
    /// `stopping` ends a wait for the input (a named pipe's writer) early: what stops the run
    /// after (``run(stopping:onFrame:)``), passed in by the owner of the run (the library never
    /// looks at signals itself).
    public convenience init(opening configuration: TrackConfiguration, notes: @escaping @Sendable (String) -> Void,
                            commands: (@Sendable (String) throws -> Void)? = nil,
                            stopping: @escaping @Sendable () -> Bool = { false }) throws {
        let source = try configuration.input.open(configuration.live, notes: notes, stopping: stopping)
        var owned: (any LiveFrameSource)? = source as? any LiveFrameSource
        defer { owned?.stop() }
        let liveRun = LiveRun(source, duration: configuration.live.duration)
        let pipeline = try configuration.perception.pipeline(for: source, input: configuration.input, notes: notes, stopping: stopping)
        var pipelineOwned: TrackingPipeline? = pipeline
        defer { pipelineOwned?.worker?.stop() }
        let framingParams = configuration.framingParams(for: source.info.size)
        // The frame clock of a live dock: a camera's capture clock, or a file played in real time.
        let origin = (source as? any LiveFrameSource)?.clockOrigin ?? MonotonicClock.now()
        let loop = try configuration.frameLoop(framingParams, liveInput: liveRun != nil, clock: { MonotonicClock.now() - origin },
                                               commands: commands)
        let zoom = configuration.zoomWindow(framingParams).flatMap { widest in
            loop.dock.zooming.map { _ in CameraZoomFraming(widest: widest, digital: configuration.dock.onvifDigitalPTZ) }
        }
        let outputs = Outputs(
            states: try configuration.outputs.states.map { try LineOutput(path: $0) },
            video: try configuration.outputs.annotatedVideo.map { path throws in
                try AnnotatedOutput(path: path, size: source.info.size,
                                    framesPerSecond: (source.info.framesPerSecond ?? 30) / Double(configuration.frames.stride))
            },
            window: configuration.outputs.preview ? PreviewWindow.open(title: "docktrack") : nil)
        let server = try configuration.outputs.serve.map { path throws in
            try TrackControlServer.serving(path, framing: loop.controller.params, dockLimits: loop.dock.reportedLimits, notes: notes)
        }
        let control = server?.control ?? (configuration.outputs.controlPath ? TrackControl(framing: loop.controller.params, dockLimits: loop.dock.reportedLimits) : nil)
        // The audio route where PipeWire runs (its default input and output), for a person
        // watching a live run and for the --serve client; its changes come with their reason.
        var audioRoutes: PipeWireRouteWatcher?
        if control != nil || liveRun != nil, PipeWireRouteWatcher.isAvailable() {
            do {
                audioRoutes = try PipeWireRouteWatcher(clock: { MonotonicClock.now() - origin }) { [weak control] change in
                    notes("\(change)")
                    control?.relay(audioRouteChange: change)
                }
            } catch {
                notes("audio route not followed: \(error)")
            }
            if let route = audioRoutes?.route {
                notes("audio route (PipeWire): \(route)")
                control?.relay(audioRoute: route)
            }
        }
        let overview = try configuration.overview.map { setup throws in
            try OverviewRun.open(setup, configuration: configuration, framing: loop.controller.params, notes: notes, stopping: stopping)
        }
        owned = nil
        pipelineOwned = nil
        self.init(source: source, pipeline: pipeline, loop: loop, selection: configuration.frames, liveRun: liveRun,
                  liveDock: configuration.dock.address.isLive, clockOrigin: origin, server: server, control: control, outputs: outputs,
                  objects: configuration.objects, cameraZoom: zoom, notes: notes, audioRoutes: audioRoutes, overview: overview)
    }
}

/// The overview camera of a run: its watch (reading and tracking on a thread of its own) and
/// the guide that joins its people to the dock camera's.
package struct OverviewRun {
    package let watch: OverviewWatch
    package var guide: OverviewGuide
    /// Whether the run was told the watch ended.
    var endTold = false
    /// Whether the run was told the calibration looks off.
    var driftTold = false
    /// Taps on the overview's picture waiting for the frame's joining of its people to the
    /// dock camera's.
    var taps: [OverviewSelection] = []

    /// Opens the overview's source and starts watching it, for a run framing with `framing`.
    static func open(_ setup: TrackConfiguration.OverviewSetup, configuration: TrackConfiguration,
                     framing: FramingController.Params, notes: @escaping @Sendable (String) -> Void,
                     stopping: () -> Bool) throws -> OverviewRun {
        let source: any FrameSource
        do {
            source = try setup.input.open(configuration.live, notes: { notes("overview: \($0)") }, stopping: stopping)
        } catch {
            throw TrackSetupError("--overview: \(error)")
        }
        let perception = configuration.perception
        var params = TrackingPipeline.Params()
        params.detectEvery = perception.detectEvery
        params.minimumConfidence = perception.threshold
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make(perception.detector, models: perception.models), cues: nil,
                                        params: params, identifiers: perception.sequentialIdentifiers ? .sequential : .random)
        // Its people keep their identifiers as the dock camera's do (pairing across the two
        // cameras stays by clothing colours: by signatures, simulate --zoom 0.3 --overview kept
        // its person in the zone on 0.942 of the frames against 0.957).
        if perception.reidentification { try pipeline.reidentify(models: perception.models) }
        if abs(setup.calibratedFieldOfView - configuration.fieldOfView) > 0.5 * .pi / 180 {
            notes(String(format: "overview: calibrated with a dock camera of %.1f°, this run's is %.1f° (--fov): calibrate again if the camera changed",
                         setup.calibratedFieldOfView * 180 / .pi, configuration.fieldOfView * 180 / .pi))
        }
        notes("overview: \(source.info.name) (\(source.info.size)), calibrated to "
              + String(format: "%.2f° on the poses checked", setup.mapping.checkedErrorDegrees.mean))
        return OverviewRun(watch: OverviewWatch(source: source, pipeline: pipeline),
                           guide: OverviewGuide(mapping: setup.mapping, camera: framing.camera, limits: framing.limits))
    }
}

extension TrackControl {
    /// The control path of a run framing with `params`: its limits, home, mode and region; the
    /// dock's own limits as it says them.
    package convenience init(framing params: FramingController.Params, dockLimits: DockLimits? = nil) {
        self.init(limits: params.limits, home: params.home, mode: params.mode, regionOfInterest: params.regionOfInterest,
                  dockLimits: dockLimits)
    }
}

extension AccessoryIdentity {
    /// How a running track introduces itself to its clients.
    package static let tracker = AccessoryIdentity(name: "docktrack track", identifier: UUID(), firmwareVersion: "0.1.0", hardwareModel: "tracker")
}

extension TrackControlServer {
    /// `track --serve`'s server on `path`, bound before the first frame, its system tracking held
    /// to the run's own `limits`.
    static func serving(_ path: String, framing params: FramingController.Params, dockLimits: DockLimits?,
                        notes: @escaping @Sendable (String) -> Void) throws -> TrackControlServer {
        let control = TrackControl(framing: params, dockLimits: dockLimits)
        let identity = AccessoryIdentity.tracker
        do {
            return try TrackControlServer(path: path, control: control, identity: identity) { notes("serve: \($0)") }
        } catch {
            throw TrackSetupError("--serve \(path): \(error)")
        }
    }
}

extension TrackConfiguration.Input {
    /// The source: a camera or a stream started (waited for and resumed when lost, with
    /// `live.reconnect`), or the file (a named pipe waited for until it has a writer or
    /// `stopping` says so).
    package func open(_ live: TrackConfiguration.LiveOptions, notes: @escaping @Sendable (String) -> Void,
                      stopping: () -> Bool) throws -> any FrameSource {
        switch self {
        case .file(let path) where live.loop:
            let file = try MediaFile.open(path, stopping: stopping)
            guard file.info.kind == .video else { return file }  // a picture is one frame, looped or not
            return LoopedFile(path: path, source: file, framesPerSecond: file.info.framesPerSecond ?? 30)
        case .file(let path):
            return try MediaFile.open(path, stopping: stopping)
        case .observations(let path):
            throw TrackSetupError("\(path): observations are tracked by CustomTrackingRun, not read as pictures")
        case .stream(let url):
            // Read live, newest frame wins; a stream that breaks or goes silent is a lost camera.
            // Refused connections cost nothing: retried every quarter of a second.
            let timeout = live.frameTimeout
            return try Self.started(live, retryInterval: 0.25, notes: notes) { origin throws(CameraError) in
                try NetworkStream(url: url, openTimeout: timeout, frameTimeout: timeout, clockOrigin: origin)
            }
        case .camera(let path, var settings):
            settings.frameTimeout = live.frameTimeout
            return try Self.started(live, notes: notes) { origin throws(CameraError) in
                try V4L2Camera(path: path, settings: settings, clockOrigin: origin)
            }
        }
    }

    /// The live source `open` makes (given its clock origin), announced, with Ctrl-C ending the
    /// run cleanly.
    private static func started(_ live: TrackConfiguration.LiveOptions, retryInterval: Double = 0.5,
                                notes: @escaping @Sendable (String) -> Void,
                                _ open: @escaping ReconnectingCamera.Opener) throws -> any FrameSource {
        let camera: any LiveFrameSource
        do {
            if live.reconnect {
                camera = try ReconnectingCamera(retryInterval: retryInterval, onEvent: { event in
                    switch event {
                    case .lost(let problem): notes("\(problem); waiting for it to come back (--reconnect)")
                    case .reconnected(let path, let seconds): notes(String(format: "%@: back after %.1f s, resuming", path, seconds))
                    }
                }, open: open)
            } else {
                camera = try open(MonotonicClock.now())
            }
        } catch {
            throw FrameSourceError.camera(error)
        }
        notes("\(camera.info.name): \(camera.info.size.width)x\(camera.info.size.height)"
              + (camera.info.framesPerSecond.map { String(format: " at %g fps", $0) } ?? "") + "; Ctrl-C stops")
        return camera
    }
}

extension TrackConfiguration.Perception {
    /// The pipeline for frames of `source`: the detector, face cues and the sound they are
    /// fused with, re-detection between detections; live input detects on a thread of its own
    /// unless told otherwise.
    package func pipeline(for source: any FrameSource, input: TrackConfiguration.Input,
                         notes: @escaping @Sendable (String) -> Void, stopping: () -> Bool) throws -> TrackingPipeline {
        if threads > 0 { OpenCVRuntime.threads = threads }
        let detector = try DetectorCatalog.make(detector, models: models)
        try detector.prepare(for: source.info.size)
        let live = source is any LiveFrameSource
        let detectAsync = self.detectAsync ?? live
        if detectAsync && !live {
            notes("note: --detect-async is for cameras; a file is read faster than real time and detections fall behind (use --detect-every)")
        }
        let cues = faceCues ? FaceCueEstimator(landmarks: try FaceLandmarkDetector(models: models)) : nil
        var params = TrackingPipeline.Params()
        params.faceRoundInterval = redetection ? TrackingPipeline.Params.faceRoundIntervalWithRedetection : 1
        params.longestNeedlessRest = redetection ? TrackingPipeline.Params.carriedNeedlessRest : 0
        params.detectEvery = TrackConfiguration.detectEvery(framesPerSecond: source.info.framesPerSecond, atMost: detectEvery,
                                                            lookGap: lookGap)
        params.adaptiveDetection = adaptiveDetection
        params.asyncDetection = detectAsync
        params.minimumConfidence = threshold
        // A still image has one frame to be seen in: its detections are its subjects (a video's
        // new person is confirmed by a second sighting).
        var trackerParams = PersonTracker.Params()
        if source.info.kind == .image { trackerParams.hitsToConfirm = 1 }
        let pipeline = TrackingPipeline(detector: detector, cues: cues, params: params, tracker: trackerParams,
                                        identifiers: sequentialIdentifiers ? .sequential : .random)
        if cues != nil { pipeline.listener = try audio.listener(for: source, input: input, notes: notes, stopping: stopping) }
        if redetection { try pipeline.redetect(models: models) }
        if reidentification { try pipeline.reidentify(models: models) }
        if gestures {
            // A models folder from before the hand networks (--models) runs on without them.
            do {
                try pipeline.watchGestures(models: models)
            } catch {
                guard case .modelMissing(let path, _) = error else { throw error }
                notes("note: gestures off: no hand model at \(path) (--gestures off says nothing)")
            }
        }
        return pipeline
    }
}

extension TrackConfiguration.AudioChoice {
    /// The sound to fuse into speaking confidence; `nil`: the picture alone.
    /// A sound file that is a named pipe is waited for until it has a writer or `stopping` says so.
    package func listener(for source: any FrameSource, input: TrackConfiguration.Input,
                         notes: @escaping @Sendable (String) -> Void, stopping: () -> Bool) throws -> SpeechListener? {
        let announce: (AudioRouteChange) -> Void = { notes("\($0)") }
        let live = source as? any LiveFrameSource
        let inputs = { ALSAInputSystem(clockOrigin: live?.clockOrigin ?? MonotonicClock.now()) }
        switch self {
        case .none:
            return nil
        case .auto where live == nil:
            // The video's own audio track, when it has one.
            guard case .file(let path) = input, let file = try? AudioFileSource(path: path, stopping: stopping) else { return nil }
            return SpeechListener(.file(file))
        case .auto where PipeWireRouteWatcher.isAvailable():
            return SpeechListener(.live(AudioRouter(system: PipeWireInputSystem(clockOrigin: live?.clockOrigin ?? MonotonicClock.now()))),
                                  onRouteChange: announce)
        case .auto:
            return SpeechListener(.live(AudioRouter(system: inputs())), onRouteChange: announce)
        case .pipewire:
            guard PipeWireRouteWatcher.isAvailable() else {
                throw TrackSetupError("--audio pipewire: no PipeWire daemon answers here (no pipewire-0 socket in $PIPEWIRE_RUNTIME_DIR or $XDG_RUNTIME_DIR), or pw-dump is not installed")
            }
            return SpeechListener(.live(AudioRouter(system: PipeWireInputSystem(clockOrigin: live?.clockOrigin ?? MonotonicClock.now()))),
                                  onRouteChange: announce)
        case .alsa(let device):
            let router = AudioRouter(system: inputs(), preferred: device)
            if let device, router.current == nil {
                notes("audio input \(device) is not available; speaking from the picture alone until an input appears")
            }
            return SpeechListener(.live(router), onRouteChange: announce)
        case .file(let path):
            do {
                return SpeechListener(.file(try AudioFileSource(path: path, stopping: stopping)))
            } catch {
                throw TrackSetupError(error.description)
            }
        }
    }
}

extension TrackConfiguration {
    /// The frame loop: the dock (commands to `commands` for `-`, the dock's pose from a
    /// simulator following them), the trace. `clock` is the frame clock of a live dock.
    package func frameLoop(_ params: FramingController.Params, liveInput: Bool, clock: @escaping @Sendable () -> Double,
                          commands: (@Sendable (String) throws -> Void)?) throws -> FrameLoop<FramingController, AnyDock> {
        var params = params
        var onvif = dock.onvif
        if let widest = zoomWindow(params), dock.onvifDigitalPTZ { onvif.digitalWindow = widest }
        // An ONVIF camera whose preset is home: opened once, asked where the preset points, and
        // driven on that same connection.
        let camera = try onvifHome(onvif)
        if let camera { params.home = camera.home }
        let opened = try dock.address.open(limits: params.limits, home: params.home, clock: clock, onvif: onvif,
                                           followedLive: liveInput, device: camera?.device) { try commands?($0) }
        let live = dock.address.isLive
        var loop = try FrameLoop(controller: FramingController(params: params), dock: opened, cameraOnDock: live && liveInput && !dock.fixedCamera,
                                 clock: live ? clock : nil, trace: try outputs.trace.map { path throws in try LineOutput(path: path) })
        // A network stream's pictures are stamped when they arrive, a camera's when taken. By
        // velocity only: between a device's reports, a move to an orientation is taken to be
        // there at once, and against those steps the delay was misjudged (2.3 s on a quiet
        // machine, and the emulated camera swung away from the person).
        if case .stream = input, params.commands == .velocity { loop.pictureDelay = PictureDelay() }
        return loop
    }

    /// With an ONVIF home preset: the camera, opened, and where it says the preset points;
    /// `nil` without one.
    func onvifHome(_ onvif: ONVIFSettings) throws -> (device: any DockHardware, home: DockOrientation)? {
        guard let name = dock.onvifHomePreset else { return nil }
        guard case .device(let device) = dock.address, DeviceScheme(of: device) == .onvif else {
            throw TrackSetupError("--onvif-home-preset needs --dock onvif:HOST:PORT")
        }
        let camera = try DockBackend.openONVIF(device, onvif: onvif)
        do {
            guard let orientation = try camera.preset(name).orientation else {
                throw TrackSetupError("--onvif-home-preset: the camera does not say where its preset \(name) points")
            }
            return (camera, orientation)
        } catch let error as DockError {
            throw TrackSetupError("--onvif-home-preset: \(error)")
        }
    }

    /// The picture at the widest zoom as a window (its aspect and field of view from the
    /// framing's camera), up to the ONVIF camera's largest magnification; `nil` without one.
    func zoomWindow(_ params: FramingController.Params) -> CropWindow? {
        guard let largest = dock.onvif.maximumMagnification else { return nil }
        let camera = params.camera
        // A picture 1000 px wide of the camera's aspect: only ratios and angles are used.
        let aspect = tan(camera.horizontalFieldOfView / 2) / tan(camera.verticalFieldOfView / 2)
        return CropWindow(sourceSize: ImageSize(width: 1000, height: max(1, Int((1000 / aspect).rounded()))), aspect: aspect,
                          fieldOfView: camera.horizontalFieldOfView, maximumZoom: largest)
    }
}
