import ArgumentParser
import DockTrack
import Foundation

/// Options for reading a live camera (a V4L2 node such as /dev/video0).
struct CameraOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Read this camera (a V4L2 device such as /dev/video0) instead of a file. A PATH under /dev/video is a camera too; a PATH that is a URL (rtsp://, http:// MJPEG, ...) is a network camera's stream.", valueName: "device"))
    var camera: String?

    @Option(help: ArgumentHelp("Camera frame size (default: the largest up to 1280x720 the camera offers).", valueName: "WxH"))
    var size: String?

    @Option(help: ArgumentHelp("Camera frames per second (default 30, when the camera lets it be set).", valueName: "fps"))
    var fps: Double?

    @Option(help: ArgumentHelp("Camera pixel format as a four-character code (default YUYV, then MJPG).", valueName: "fourcc"))
    var pixelFormat: String?

    @Option(help: ArgumentHelp("Give up when the camera sends no frame for this many seconds (a network stream: also when it does not answer within them).", valueName: "seconds"))
    var frameTimeout = 5.0

    @Flag(help: "Play a video file over and over (a demo, a kiosk, a test rig): the run ends at --end, Ctrl-C or SIGTERM.")
    var loop = false

    @Flag(help: "When the camera disappears (unplugged) or falls silent, wait for it to come back and resume.")
    var reconnect = false

    @Option(help: ArgumentHelp("Stop a live run after this many seconds (default: until Ctrl-C or --end).", valueName: "seconds"))
    var duration: Double?

    func validate() throws {
        if let size, ImageSize(parsing: size) == nil { throw ValidationError("--size takes WIDTHxHEIGHT, e.g. 1280x720, not '\(size)'") }
        if let fps, !(fps > 0) { throw ValidationError("--fps must be above 0") }
        if let pixelFormat, FourCC(pixelFormat) == nil { throw ValidationError("--pixel-format takes four characters, e.g. YUYV or MJPG, not '\(pixelFormat)'") }
        guard frameTimeout > 0 else { throw ValidationError("--frame-timeout must be above 0") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be above 0") }
    }

    /// The input these options and `path` name: a network stream, a camera (--camera, or a
    /// PATH that names a device node), or the media file.
    func input(_ path: String?) throws -> TrackConfiguration.Input {
        if let path, NetworkStream.isURL(path) { return .stream(path) }
        if let camera = camera ?? path.flatMap({ CameraDiscovery.isDevicePath($0) ? $0 : nil }) {
            return .camera(camera, CameraSettings(size: size.flatMap(ImageSize.init(parsing:)), framesPerSecond: fps,
                                                  pixelFormat: pixelFormat.flatMap(FourCC.init)))
        }
        // Camera settings say nothing about a file: said, not silently ignored.
        let cameraOnly = [("--size", size != nil), ("--fps", fps != nil), ("--pixel-format", pixelFormat != nil),
                          ("--duration", duration != nil), ("--reconnect", reconnect)].filter(\.1).map(\.0)
        if !cameraOnly.isEmpty {
            throw ValidationError("\(cameraOnly.joined(separator: ", ")) \(cameraOnly.count == 1 ? "is" : "are") for cameras and streams, not for a file (\(path ?? "")); use --start, --end and --stride to choose a file's frames")
        }
        return .file(path ?? "")
    }

    var liveOptions: TrackConfiguration.LiveOptions {
        var options = TrackConfiguration.LiveOptions()
        options.loop = loop
        options.reconnect = reconnect
        options.duration = duration
        options.frameTimeout = frameTimeout
        return options
    }
}

extension ImageSize {
    /// "1280x720".
    init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { return nil }
        self.init(width: parts[0], height: parts[1])
    }
}
