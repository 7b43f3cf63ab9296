import ArgumentParser
import DockTrack

// Options several commands share, declared once here so that their names, help and checks are
// the same wherever they appear.

/// --annotate: a copy of the input with what the run saw drawn on it.
struct AnnotateOption: ParsableArguments {
    @Option(name: .customLong("annotate"),
            help: ArgumentHelp("Also write the input with what the run saw drawn on it: subjects (and, where a dock is framed, the target zone and the pose). .mp4 or .avi; an image for a picture.", valueName: "file"))
    var path: String?

    /// The annotated video of frames of `size` at `framesPerSecond`; `nil` without the option.
    func video(size: ImageSize, framesPerSecond: Double) throws -> AnnotatedOutput? {
        try path.map { path throws in try AnnotatedOutput(path: path, size: size, framesPerSecond: framesPerSecond) }
    }
}

/// --trace: the framing controller's trace, one line per frame.
struct TraceOption: ParsableArguments {
    @Option(name: .customLong("trace"),
            help: ArgumentHelp("Write the controller's trace: one tab-separated line per frame (time, pan, tilt, target pan, target tilt, commanded pan and tilt speed in rad and rad/s, state; a virtual dock's window as angles). Plot it with docktrack plot.", valueName: "file"))
    var path: String?

    /// The trace's output; `nil` without the option.
    func output() throws -> LineOutput? { try path.map { path throws in try LineOutput(path: path) } }
}

/// --mode: how subjects are placed in the picture.
struct FramingModeOption: ParsableArguments {
    @Option(name: .customLong("mode"),
            help: ArgumentHelp("Framing: automatic (the primary subject, with the others when they fit), center, left (subject on the left third), right.", valueName: "mode"))
    var mode: FramingMode = .automatic
}

extension FramingMode: ExpressibleByArgument {}
