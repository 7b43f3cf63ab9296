import ArgumentParser
import DockTrack
import Foundation

@main
struct DockTrackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docktrack",
        abstract: "Subject tracking for motorized camera docks: detect, track and frame people in video.",
        discussion: """
            Coordinates: observation rects are unit coordinates (0...1) with the origin at the \
            lower-left corner of the frame. Output is JSON Lines on stdout; errors and progress \
            go to stderr.
            """,
        version: "0.1.0 (OpenCV \(OpenCVRuntime.version))",
        subcommands: [DetectCommand.self, TrackCommand.self, DevicesCommand.self, VADCommand.self, SimulateCommand.self, PlotCommand.self, StepResponseCommand.self, BenchCommand.self]
    )
}

/// Options every command that runs a detector shares.
struct DetectorOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp(
        "Detector: \(DetectorCatalog.names.joined(separator: ", ")); join several with ','.",
        discussion: DetectorCatalog.descriptions.map { "\($0.key): \($0.value)" }.joined(separator: "\n")))
    var detector = "default"

    @Option(help: "Minimum confidence (0...1) of a reported observation.")
    var threshold = 0.5

    @Option(help: ArgumentHelp("Folder holding DockTrack's model files.", valueName: "dir"))
    var models: String?

    @Option(help: ArgumentHelp("Folder holding OpenCV's haarcascades/ and lbpcascades/.", valueName: "dir"))
    var cascades: String?

    @Option(help: "Threads OpenCV may use (0: OpenCV's default, one per core).")
    var threads = 0

    func validate() throws {
        guard (0...1).contains(threshold) else { throw ValidationError("--threshold must be between 0 and 1, not \(threshold)") }
        // TBB crashes (in libtbbmalloc) when asked for tens of thousands of workers.
        guard (0...256).contains(threads) else { throw ValidationError("--threads must be between 0 and 256, not \(threads)") }
    }

    /// The selected detector, with OpenCV's thread count set as asked.
    func makeDetector() throws -> any Detector {
        if threads > 0 { OpenCVRuntime.threads = threads }
        return try DetectorCatalog.make(detector, models: ModelStore.locate(models: models, cascades: cascades))
    }
}

/// Which frames to process.
struct FrameOptions: ParsableArguments {
    @Option(help: "First frame to process (0-based).")
    var start = 0

    @Option(help: "Process frames before this one only (exclusive end).")
    var end: Int?

    @Option(help: "Process every Nth frame.")
    var stride = 1

    func validate() throws {
        guard start >= 0 else { throw ValidationError("--start must be 0 or more") }
        guard stride >= 1 else { throw ValidationError("--stride must be 1 or more") }
        if let end, end <= start { throw ValidationError("--end (\(end)) must be greater than --start (\(start))") }
    }

    var selection: FrameSelection { FrameSelection(start: start, end: end, stride: stride) }
}

/// Writes one line to stdout at once (a consumer at the other end of a pipe sees every line as
/// soon as it is made, and nothing is lost in a buffer if the run fails later).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes one line to stderr, unbuffered.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Runs `body`; an error a user can act on becomes one line `docktrack: …` on stderr and exit 1.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as FrameSourceError {
        printError("docktrack: \(error)")
        throw ExitCode.failure
    } catch let error as DetectorError {
        printError("docktrack: \(error)")
        throw ExitCode.failure
    } catch let error as OpenCVError {
        printError("docktrack: \(error)")
        throw ExitCode.failure
    } catch let error as LineOutput.CannotWrite {
        printError("docktrack: \(error)")
        throw ExitCode.failure
    } catch let error as ToolError {
        printError("docktrack: \(error)")
        throw ExitCode.failure
    }
}

/// A failure of the command itself (an output that cannot be written, ...).
struct ToolError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
