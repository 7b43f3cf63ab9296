import ArgumentParser
import DockTrack
import DockTrackCommandLine

/// The options as the library takes them: a `TrackConfiguration`, with a config file's options
/// merged under the command line's.
extension TrackCommand {
    /// The run the options ask for, as the library takes it.
    func configuration() throws -> TrackConfiguration {
        var configuration = TrackConfiguration(input: try observations.map { .observations($0) } ?? live.input(path ?? live.camera))
        configuration.live = live.liveOptions
        configuration.frames = frames.selection
        configuration.perception = perception.perception(detection)
        framing.apply(to: &configuration)
        try dockOptions.apply(to: &configuration)
        configuration.dock.fixedCamera = fixedCamera
        configuration.objects = object.map { UnitRect(upperLeftText: $0)! }
        configuration.outputs = output.outputs
        configuration.overview = try overview.setup()
        return configuration
    }

    /// The command as the config file and the command line give it together: the file's
    /// options first, those the command line names left out (and its input when the command
    /// line has one), then the command line's.
    static func withConfig(_ path: String, commandLine parsed: TrackCommand) throws -> TrackCommand {
        let file: ConfigFile
        do {
            file = try ConfigFile(contentsOf: path)
        } catch {
            throw ValidationError(error.description)
        }
        var commandLine = Array(CommandLine.arguments.dropFirst())
        if let track = commandLine.firstIndex(of: "track") { commandLine.removeFirst(track + 1) }
        // --config itself goes (the file names no other).
        var rest: [String] = []
        var skipNext = false
        for token in commandLine {
            if skipNext { skipNext = false; continue }
            if token == "--config" { skipNext = true; continue }
            if token.hasPrefix("--config=") { continue }
            rest.append(token)
        }
        let input: ConfigFile.CommandLineInput
        if parsed.live.camera != nil || parsed.path.map({ NetworkStream.isURL($0) || CameraDiscovery.isDevicePath($0) }) == true {
            input = .live
        } else if parsed.path != nil || parsed.observations != nil {
            input = .file
        } else {
            input = .none
        }
        let arguments = file.arguments(leavingOut: ConfigFile.namesGiven(by: rest, shortNames: ["d": "detector"]),
                                       commandLineInput: input) + rest
        do {
            return try TrackCommand.parse(arguments)
        } catch {
            throw ValidationError("--config \(path): \(TrackCommand.message(for: error))")
        }
    }
}
