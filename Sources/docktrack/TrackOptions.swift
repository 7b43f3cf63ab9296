import ArgumentParser
import DockTrack
import DockTrackCommandLine
import Foundation

/// How track perceives: the detection schedule, re-detection, face cues, sound, identifiers.
struct PerceptionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Run the detector on every Nth processed frame (default \(TrackConfiguration.defaultDetectEvery), or more often on a source under 13.3 fps: looks at most \(TrackConfiguration.defaultLookGap) s of video apart); between, each tracked face and body is found again where it is predicted (--redetection). On a file, decoding and detection run on threads of their own ahead of the tracker (same results); live, the detection thread detects no more often than every Nth frame. 1: every frame (slower; see docktrack bench).", valueName: "n"))
    var detectEvery: Int?

    @Flag(inversion: .prefixedNo, help: "Detect on a thread of its own, newest frame wins: every frame is tracked and framed at once, detections are folded in as they finish. The default for cameras and network streams; on a file, read faster than real time, detections fall far behind (--detect-every is used there).")
    var detectAsync: Bool?

    @Flag(help: "Adapt the detection interval: it doubles (up to 8 frames) while the tracked subjects stay as they are, and is back to every frame on any change.")
    var adaptiveDetection = false

    @Flag(inversion: .prefixedNo, help: "On frames the detector skips, look for each tracked face and body again where it is predicted (one O-Net run per face, a template match per body): boxes stay on moving people and faces are checked every frame.")
    var redetection = true

    @Flag(inversion: .prefixedNo, help: "Tell people apart by their look to a re-identification network (OpenVINO's person-reidentification-retail-0248, about 2.5 ms a read on one core): two people who cross keep their identifiers, and a person lost behind something or gone from the picture for up to 20 s is known again. Read only for bodies two people could be, people who met someone, newcomers, and every 3 s.")
    var reidentification = true

    @Option(help: ArgumentHelp("Hands-free choice: on, a tracked person who holds up an open palm, fingers spread, beside or above their head for about half a second is followed (as a tap or selectSubjects chooses them; tracking turns on if it was off); the same person doing it again is let go. Reported in --states (\"gestures\"), to --serve's clients (an accessory event) and on the control page. Hands are looked for only above tracked people's shoulders, three times a second (about 1 ms a frame with one person on one core). off: never.", valueName: "on|off"))
    var gestures: Switch = .on

    @Flag(help: "Do not read speaking and looking-at-camera cues from faces (faster).")
    var noFaceCues = false

    @Option(help: ArgumentHelp(
        "Sound for speaking confidence: auto (a video's own audio track; for a camera PipeWire's default input where PipeWire runs, else the ALSA inputs, following devices as they come and go), none, pipewire, alsa or alsa:DEVICE, or an audio/video FILE.",
        valueName: "source"))
    var audio = "auto"

    @Flag(help: "Number identifiers 00000000-0000-0000-0000-000000000001, ... instead of random UUIDs (reproducible output).")
    var sequentialIdentifiers = false

    func validate() throws {
        guard TrackConfiguration.detectEveryRange.contains(detectEvery ?? 1) else { throw ValidationError(TrackConfiguration.detectEveryRangeMessage) }
    }

    /// The perception these options and `detection`'s ask for.
    func perception(_ detection: DetectorOptions) -> TrackConfiguration.Perception {
        var perception = TrackConfiguration.Perception()
        perception.detector = detection.detector
        perception.models = detection.model.store
        perception.threshold = detection.threshold
        perception.threads = detection.model.threads
        perception.detectEvery = detectEvery ?? TrackConfiguration.defaultDetectEvery
        // An interval asked for is kept whatever the frame rate.
        if detectEvery != nil { perception.lookGap = nil }
        perception.detectAsync = detectAsync
        perception.adaptiveDetection = adaptiveDetection
        perception.redetection = redetection
        perception.reidentification = reidentification
        perception.faceCues = !noFaceCues
        perception.gestures = gestures == .on
        perception.audio = TrackConfiguration.AudioChoice(audio)
        perception.sequentialIdentifiers = sequentialIdentifiers
        return perception
    }
}

/// What track writes and serves besides the dock's commands.
struct TrackOutputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Write subject states here, one JSON line per frame ('-': stdout, instead of the commands).", valueName: "file"))
    var states: String?

    @OptionGroup var annotate: AnnotateOption
    @OptionGroup var trace: TraceOption

    @Flag(help: "Print a summary to stderr at the end.")
    var summary = false

    @Flag(help: "Show the annotated frames in a window while running (needs a display).")
    var preview = false

    @Option(help: ArgumentHelp("Serve the dock protocol on this Unix socket while tracking, as DockKit's API: another program switches system tracking off and on, drives the dock while it is off, changes the framing mode, region of interest and subject selection, and reads a tracking state per frame (docs/framing-and-docks.md: Controlling a running track).", valueName: "socket"))
    var serve: String?

    @Option(help: ArgumentHelp("Serve a control page on this address while tracking (HOST:PORT, or PORT for 127.0.0.1): the live picture, a tap to follow a person, framing, tracking on or off, a joystick; any browser opens it. Beyond loopback a token is needed: printed at start, or read from --http-token-file.", valueName: "host:port"))
    var http: String?

    @Option(help: ArgumentHelp("The control page's token, read from this file (its first line).", valueName: "file"))
    var httpTokenFile: String?

    /// --http's host and port.
    var httpAddress: (host: String, port: Int)? {
        guard let http else { return nil }
        let parts = http.split(separator: ":", omittingEmptySubsequences: false)
        var host = parts.count > 1 ? parts.dropLast().joined(separator: ":") : "127.0.0.1"
        // An IPv6 address in brackets ([::]:8080, [::1]:8080): the address inside.
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 { host = String(host.dropFirst().dropLast()) }
        guard let port = parts.last.flatMap({ Int($0) }), (0...65535).contains(port), !host.isEmpty,
              !host.contains("[") && !host.contains("]") else { return nil }
        return (host, port)
    }

    var outputs: TrackConfiguration.Outputs {
        var outputs = TrackConfiguration.Outputs()
        outputs.states = states
        outputs.annotatedVideo = annotate.path
        outputs.trace = trace.path
        outputs.preview = preview
        outputs.serve = serve
        outputs.controlPath = http != nil
        return outputs
    }

    /// Where the dock's commands go when the dock is `-`: stdout, unless the states go there.
    func commandStream() throws -> LineOutput? { states == "-" ? nil : try LineOutput(path: "-") }
}

/// track --virtual-camera.
struct VirtualCameraOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Publish the reframed picture as a camera other programs open (a PipeWire video source with this name; docs/virtual-dock.md: A virtual camera). The frame is cropped, panned and zoomed as reframe does; no dock is driven.", valueName: "name"))
    var virtualCamera: String?

    @Option(help: ArgumentHelp("The virtual camera's frame size (its aspect ratio is the window's).", valueName: "WxH"))
    var virtualCameraSize = "1280x720"

    func validate() throws {
        guard virtualCamera != nil else { return }
        guard let size = ReframeCommand.parseSize(virtualCameraSize), size.width % 2 == 0, size.height % 2 == 0 else {
            throw ValidationError("--virtual-camera-size takes WIDTHxHEIGHT, even numbers from 2 to 8192, not '\(virtualCameraSize)'")
        }
    }
}

/// track --overview: a fixed camera that sees the room.
struct OverviewOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A fixed camera that sees the whole room (a camera such as /dev/video1, a stream URL or a video file): people it sees and the dock's camera does not are reached at once. Needs --overview-calibration.", valueName: "source"))
    var overview: String?

    @Option(help: ArgumentHelp("The overview's calibration onto the dock, as docktrack calibrate wrote it.", valueName: "file"))
    var overviewCalibration: String?

    func validate() throws {
        if overview != nil && overviewCalibration == nil {
            throw ValidationError("--overview needs --overview-calibration FILE (make it with docktrack calibrate --overview SRC --camera SRC --dock ADDRESS)")
        }
        if overview == nil && overviewCalibration != nil { throw ValidationError("--overview-calibration is for --overview") }
    }

    /// The overview as the library takes it; its camera opened at its own default settings.
    func setup() throws -> TrackConfiguration.OverviewSetup? {
        guard let overview, let overviewCalibration else { return nil }
        let (mapping, fieldOfView) = try OverviewCalibrationFile.read(overviewCalibration)
        return TrackConfiguration.OverviewSetup(input: .named(overview), mapping: mapping, calibratedFieldOfView: fieldOfView * .pi / 180)
    }
}

extension TrackConfiguration.Input {
    /// The input `source` names: a stream for a URL, a camera (at its own default settings) for a
    /// device path, else a file.
    static func named(_ source: String) -> Self {
        NetworkStream.isURL(source) ? .stream(source) : CameraDiscovery.isDevicePath(source) ? .camera(source, CameraSettings()) : .file(source)
    }
}

/// An option that is on or off (`--gestures off`).
enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off
}
