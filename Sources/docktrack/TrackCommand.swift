import ArgumentParser
import DockTrack
import DockTrackCommandLine
import DockTrackPage
import Foundation

struct TrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Track and rank the people (and chosen objects) in a video and drive a dock to frame them.",
        discussion: """
            stdout: dock commands, one JSON line per frame, e.g. \
            {"time":0.4,"command":"setAngularVelocity","velocity":{"x":0.0,"y":0.12,"z":0.0}} \
            (x pitch, positive tilts down; y yaw, positive pans right; rad/s), for a dock or docksim; \
            the recorded camera is taken as fixed at the dock's home pose. The last line is always a stop. \
            With --dock ADDRESS the dock is driven directly (another process on a socket, a VISCA or UVC \
            device, an ONVIF camera: onvif:HOST:PORT) and a live camera is taken to sit on it: each frame \
            is seen from where the dock reports it pointed at capture. A file with such a dock plays in \
            real time. The dock is stopped at every end: end of input, an error, Ctrl-C or SIGTERM \
            (exit 130, 143), and after 0.5 s without frames (an outage; it moves again when they return).
            With --observations FILE ('-': stdin) no video is read: the caller's observations \
            (lines in the format of docktrack detect, 10 to 30 per second by their time) are tracked \
            instead (custom tracking); observations outside that rate are reported on stderr.
            Each line of --states: {"frame":12,"time":0.4,"subjects":[{"identifier":"…UUID…","kind":"person",\
            "rect":{"x":…,"y":…,"width":…,"height":…},"saliencyRank":1,"timeInView":4.2,"speakingConfidence":0.8,\
            "lookingAtCameraConfidence":0.9,"faceRect":{…}}]}
            Subjects are ordered by saliencyRank (1 = most salient). kind is person or object; \
            rects are unit coordinates with the origin at the lower-left; the confidences are 0...1, \
            or null when the person's face is not seen; faceRect is present when it is.
            """
    )

    @Argument(help: "A video file (or an image: one frame), or a camera such as /dev/video0. Not with --observations.")
    var path: String?

    @OptionGroup(title: "Live camera") var live: CameraOptions

    @Option(help: ArgumentHelp("Track these observations (detect's JSON Lines; '-': stdin) instead of detecting in a video.", valueName: "file"))
    var observations: String?

    @OptionGroup var detection: DetectorOptions
    @OptionGroup var perception: PerceptionOptions
    @OptionGroup var frames: FrameOptions
    @OptionGroup var framing: FramingOptions
    @OptionGroup(title: "Dock") var dockOptions: DockOptions

    @Flag(help: "With --dock and a camera: the camera does not move with the dock (it stands beside it).")
    var fixedCamera = false

    @Option(parsing: .singleValue, help: ArgumentHelp(
        "Also track the object in this box on the first processed frame: x,y,width,height in unit coordinates, origin at the upper-left (as read off the picture). Repeatable.",
        valueName: "x,y,w,h"))
    var object: [String] = []

    @OptionGroup var output: TrackOutputOptions
    @OptionGroup var virtualCamera: VirtualCameraOptions
    @OptionGroup(title: "Overview camera") var overview: OverviewOptions

    @Option(help: ArgumentHelp(
        "A saved setup: a TOML file whose keys are this command's long options (input = the video or camera; true gives a flag). Options on the command line override it. See docs/track.md.",
        valueName: "file"))
    var config: String?

    func validate() throws {
        // With a config file every check waits for the options it adds (run()).
        guard config == nil else { return }
        if virtualCamera.virtualCamera != nil, observations != nil || dockOptions.dock != nil || output.serve != nil || output.http != nil {
            throw ValidationError("--virtual-camera reframes the picture itself: not with --observations, --dock, --serve or --http")
        }
        if overview.overview != nil && (observations != nil || virtualCamera.virtualCamera != nil) {
            throw ValidationError("--overview steers a dock from a second camera: not with --observations or --virtual-camera")
        }
        if observations != nil && output.http != nil {
            throw ValidationError("--http shows the picture: --observations has none (use --serve)")
        }
        guard [path, live.camera, observations].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give one input: a video PATH, --camera or --observations")
        }
        if output.http != nil && output.httpAddress == nil {
            throw ValidationError("--http takes HOST:PORT or PORT (0...65535), not '\(output.http!)'")
        }
        for box in object where UnitRect(upperLeftText: box) == nil {
            throw ValidationError("--object takes x,y,width,height in 0...1 with width and height > 0, not '\(box)'")
        }
    }

    func run() throws {
        if let config { return try Self.withConfig(config, commandLine: self).run() }
        // Ctrl-C and SIGTERM end every run as its end of input does (outputs finished, the dock
        // told to stop), then exit 130 or 143.
        RunInterruption.install()
        try reportingErrors {
            let configuration = try configuration()
            let notes: @Sendable (String) -> Void = { printError("docktrack: \($0)") }
            let commandStream = try output.commandStream()
            let commands: @Sendable (String) throws -> Void = { try commandStream?.write($0) }
            if observations != nil {
                try CustomTrackingRun.run(configuration, notes: notes, commands: commands, stopping: { RunInterruption.requested })
            } else if let name = virtualCamera.virtualCamera {
                let size = ReframeCommand.parseSize(virtualCamera.virtualCameraSize)!
                notes("\(try VirtualCameraRun.run(configuration, name: name, size: size, notes: notes, stopping: { RunInterruption.requested }))")
            } else {
                try track(configuration, notes: notes, commands: commands)
            }
            try exitIfInterrupted()
        }
    }

    /// The session over a camera, a stream or a file, with progress and --summary.
    private func track(_ configuration: TrackConfiguration, notes: @escaping @Sendable (String) -> Void,
                       commands: @escaping @Sendable (String) throws -> Void) throws {
        let session = try TrackSession(opening: configuration, notes: notes, commands: commands, stopping: { RunInterruption.requested })
        try openControlPage(for: session, notes: notes)
        var progress = ProgressLine(total: session.source.info.frameCount.map { frames.selection.count(of: $0) })
        // A source failing midway (a camera unplugged, a truncated file) still gets its summary.
        defer {
            progress.finish()
            if output.summary { session.summary.lines.forEach { printError("docktrack: \($0)") } }
        }
        _ = try session.run(stopping: { RunInterruption.requested }, onFrame: { progress.update(done: $0) })
        if let video = session.outputs.video { notes("annotated output written to \(video.path)") }
    }

    /// --http: the control page on the session's control path; its address (with the token
    /// beyond loopback) told in the notes.
    private func openControlPage(for session: TrackSession, notes: @escaping @Sendable (String) -> Void) throws {
        guard let (host, port) = output.httpAddress, let control = session.control else { return }
        var token: String?
        if let file = output.httpTokenFile {
            token = try ControlPage.readToken(file)
        } else if !ControlPage.isLoopback(host) {
            token = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 16) }.joined()
        }
        let page = try ControlPage(host: host, port: port, control: control, identity: .tracker, token: token, log: notes)
        session.show(on: page)
        // A token of the run's own is printed (it is the only way to it); one from a file is not
        // (a service's log would keep it).
        let query = output.httpTokenFile == nil ? token.map { "?token=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? "" : ""
        let hint = output.httpTokenFile.map { " (the token: the first line of \($0))" } ?? ""
        notes("control page: http://\(ControlPage.addressToOpen(page.address))/\(query)\(hint)")
    }
}
