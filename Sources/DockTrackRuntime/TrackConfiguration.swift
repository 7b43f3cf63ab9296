import DockTrackCore
import DockTrackDetection
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackTracking

/// Everything a `track` run is asked to do, as a plain value: what the command line's options
/// say, or what another program (a test, a service) writes. ``TrackSession/init(opening:notes:)``
/// opens it: the source, the pipeline, the dock, the control server and the outputs.
public struct TrackConfiguration: Sendable {
    /// Where the pictures come from.
    public enum Input: Sendable, Equatable {
        /// A video file, or a picture (one frame).
        case file(String)
        /// A V4L2 camera such as /dev/video0.
        case camera(String, CameraSettings)
        /// A network stream (MJPEG over HTTP), read live with `frameTimeout` as its silence limit.
        case stream(String)
        /// No pictures: the caller's observations (`detect`'s JSON lines) from this file, `-`
        /// for stdin, tracked instead (``CustomTrackingRun``).
        case observations(String)
    }

    /// What happens when a live source is lost, and how long a live run lasts.
    public struct LiveOptions: Sendable, Equatable {
        /// Play a video file over and over.
        public var loop = false
        /// Wait for a lost camera or stream to come back, and resume.
        public var reconnect = false
        /// Seconds a live run lasts; `nil`: until stopped.
        public var duration: Double?
        /// Seconds without a frame before a camera or stream counts as lost.
        public var frameTimeout = 5.0
        public init() {}
    }

    /// How people are found and followed from frame to frame.
    public struct Perception: Sendable, Equatable {
        /// A detector of ``DetectorCatalog`` (names joined with ',' combine).
        public var detector = "default"
        public var models = ModelStore.locate(models: nil, cascades: nil)
        /// Minimum confidence of an observation.
        public var threshold = 0.5
        /// Threads OpenCV may use; 0: its default.
        public var threads = 0
        /// The detector runs on every Nth frame; tracked faces and bodies are found again between.
        public var detectEvery = TrackConfiguration.defaultDetectEvery
        /// The longest time between two looks, in seconds of video: on a source with fewer than
        /// `detectEvery` frames in that time, the detector runs more often than every
        /// `detectEvery`th frame (``TrackConfiguration/detectEvery(framesPerSecond:atMost:lookGap:)``).
        /// `nil`: every `detectEvery`th frame whatever the frame rate (a `--detect-every` given).
        public var lookGap: Double? = TrackConfiguration.defaultLookGap
        /// Detect on a thread of its own, newest frame wins; `nil`: for live input only.
        public var detectAsync: Bool?
        /// The detection interval doubles while nothing changes.
        public var adaptiveDetection = false
        /// Tracked faces and bodies found again where predicted on the frames between.
        public var redetection = true
        /// People told apart by re-identification signatures (crossings, people seen again).
        public var reidentification = true
        /// Speaking and looking-at-camera cues read from faces.
        public var faceCues = true
        /// Raised palms watched: a held-up open hand chooses its person (``GestureWatch``).
        public var gestures = true
        /// The sound speaking confidence is fused with.
        public var audio = AudioChoice.auto
        /// Sequential identifiers (reproducible output) instead of random UUIDs.
        public var sequentialIdentifiers = false
        public init() {}
    }

    /// Where speaking confidence hears from.
    public enum AudioChoice: Sendable, Equatable {
        /// A file's own audio track; for a camera, PipeWire's default input where PipeWire runs,
        /// else the ALSA inputs as they come and go.
        case auto
        /// The picture alone.
        case none
        /// ALSA's inputs, preferring the named device when given.
        case alsa(device: String?)
        /// PipeWire's default input, following it as it changes.
        case pipewire
        /// An audio or video file.
        case file(String)

        /// `auto`, `none`, `alsa`, `alsa:DEVICE`, `pipewire` or a file's path.
        public init(_ text: String) {
            switch text {
            case "auto": self = .auto
            case "none": self = .none
            case "alsa": self = .alsa(device: nil)
            case "pipewire": self = .pipewire
            case let spec where spec.hasPrefix("alsa:"): self = .alsa(device: String(spec.dropFirst(5)))
            default: self = .file(text)
            }
        }
    }

    /// The dock that is driven and how.
    public struct DockChoice: Sendable, Equatable {
        /// `-` (commands as JSON lines on the command stream), `sim`, `unix:PATH` or a device.
        public var address = DockAddress.commandStream
        /// Look for people when nobody is in view; `nil`: for a dock that reports where it points.
        public var search: Bool?
        /// Seconds of searching before returning home.
        public var searchTime = 30.0
        /// An ONVIF camera's spaces, credentials and zoom.
        public var onvif = ONVIFSettings()
        /// An ONVIF preset whose pose is home.
        public var onvifHomePreset: String?
        /// An ONVIF camera's PTZ is a window cropped from its wider picture.
        public var onvifDigitalPTZ = false
        /// With a camera and a live dock: the camera does not move with the dock.
        public var fixedCamera = false
        public init() {}

        /// The search when nobody is in view: on when asked, else `byDefault`; `nil` when off.
        package func searchParams(byDefault: Bool) -> SubjectSearch.Params? {
            guard search ?? byDefault else { return nil }
            var params = SubjectSearch.Params()
            params.giveUpAfter = searchTime
            return params
        }
    }

    /// Files and services a run writes to besides the dock.
    public struct Outputs: Sendable, Equatable {
        /// Subject states, a JSON line per frame (`-`: the command stream's place).
        public var states: String?
        /// The input with the subjects and framing drawn on it.
        public var annotatedVideo: String?
        /// The controller's trace.
        public var trace: String?
        /// Show the annotated frames in a window.
        public var preview = false
        /// Serve the dock protocol on this Unix socket (DockKit's system tracking).
        public var serve: String?
        /// Keep a control path for a client that is not a socket (a control page, `--http`),
        /// with or without `serve`.
        public var controlPath = false
        public init() {}
    }

    public var input: Input
    public var live = LiveOptions()
    public var frames = FrameSelection(start: 0, end: nil, stride: 1)
    public var perception = Perception()
    /// The framing controller's settings; its camera is made from the picture's size and
    /// ``fieldOfView`` when the source opens.
    public var framing = FramingController.Params()
    /// The camera's horizontal field of view, radians.
    public var fieldOfView = 70 * Double.pi / 180
    public var dock = DockChoice()
    /// Boxes to follow as objects from the first frame (unit coordinates, lower-left origin).
    public var objects: [UnitRect] = []
    public var outputs = Outputs()
    /// A fixed overview camera that sends the dock to people its own camera does not see.
    package var overview: OverviewSetup?

    /// The overview camera: where its pictures come from, and its calibration onto the dock
    /// (`docktrack calibrate`).
    package struct OverviewSetup: Sendable {
        package var input: Input
        package var mapping: OverviewMapping
        /// Radians across the dock camera's picture when the calibration was made.
        package var calibratedFieldOfView: Double

        package init(input: Input, mapping: OverviewMapping, calibratedFieldOfView: Double) {
            self.input = input
            self.mapping = mapping
            self.calibratedFieldOfView = calibratedFieldOfView
        }
    }

    public init(input: Input) { self.input = input }

    /// The detection interval without one given: on vtest.avi, the default detector every 4th
    /// frame with re-detection between keeps the 17 labelled walk points with no identity
    /// change, as every frame does, at about 10 times its speed (docs/performance.md).
    public static let defaultDetectEvery = 4
    /// What `--detect-every` may be: a look at least every 1000 frames (33 s at 30 fps).
    public static let detectEveryRange = 1...1000
    public static let detectEveryRangeMessage = "--detect-every must be between 1 and 1000"

    /// Looks at most 0.3 s of video apart: every 4th frame of a 14 to 30 fps source (0.29 to
    /// 0.13 s apart), every 3rd of vtest.avi's 10 fps. Between looks the tracker carries people
    /// by their motion and their look; 0.4 s apart (every 4th frame at 10 fps) the walkers of
    /// vtest.avi who cross or leave the picture were carried beside where they are. `eval`, false
    /// people a frame on vtest.avi every 4th, 3rd and 2nd frame: 0.077, 0.020, 0.033; at 360x270
    /// 0.083, 0.037, 0.040 (found 0.932, 0.930, 0.945); vtest's labelled walks keep their
    /// identifiers best every 3rd frame (0.88 of frames under the most frequent, 0.72 every 2nd).
    public static let defaultLookGap = 0.3

    /// The detection interval for a source of `framesPerSecond` (unknown: `atMost`): every
    /// `atMost`th frame, or more often, so that looks are at most `lookGap` seconds apart.
    public static func detectEvery(framesPerSecond: Double?, atMost: Int = defaultDetectEvery,
                                   lookGap: Double? = defaultLookGap) -> Int {
        guard let fps = framesPerSecond, fps.isFinite, fps > 0, let gap = lookGap, gap.isFinite, gap > 0 else {
            return max(1, atMost)
        }
        // A microsecond's slack: 10 fps x 0.3 s is 3.0000000000000004 frames.
        let frames: Double = (fps * gap + 0.000001).rounded(.down)
        let fitting: Int = frames < Double(atMost) ? Int(frames) : atMost
        return max(1, fitting)
    }

    /// The framing controller's settings for pictures of `size`: the camera, the dock's kind of
    /// commands and the search.
    public func framingParams(for size: ImageSize) -> FramingController.Params {
        var params = framing
        params.camera = CameraModel(horizontalFieldOfView: fieldOfView, size: size)
        if let search = dock.searchParams(byDefault: dock.address.isLive) { params.search = search }
        return params
    }
}
