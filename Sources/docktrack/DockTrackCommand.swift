import ArgumentParser
import DockTrack
import DockTrackCommandLine
import DockTrackPage
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
        subcommands: [DetectCommand.self, EvalCommand.self, TrackCommand.self, DevicesCommand.self, VADCommand.self, SimulateCommand.self, ReframeCommand.self, CalibrateCommand.self, ReportCommand.self, PlotCommand.self, StepResponseCommand.self, BenchCommand.self, ONVIFCommand.self]
    )

    static func main() {
        OpenCVRuntime.keepFreedBlocks()
        // A reader that goes away (`--states - | head`, a FIFO whose reader exits) is a write
        // error the run ends on, as on any other: the outputs finished and the dock told to stop.
        // SIGPIPE's default would end the process there with the dock still turning.
        signal(SIGPIPE, SIG_IGN)
        main(nil)
    }
}

/// Options every command that runs a detector shares.
struct DetectorOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: ArgumentHelp(
        "Detector: \(DetectorCatalog.names.joined(separator: ", ")); join several with ','.",
        discussion: DetectorCatalog.descriptions.map { "\($0.key): \($0.value)" }.joined(separator: "\n")))
    var detector = "default"

    @OptionGroup var model: ModelOptions

    var threshold: Double { model.threshold }
    var models: String? { model.models }
    var cascades: String? { model.cascades }

    /// The selected detector, with OpenCV's thread count set as asked.
    func makeDetector() throws -> any Detector {
        try model.make(detector)
    }
}

/// Where models are, how sure a detection must be, how many threads OpenCV may use: for every
/// command that detects (`bench` chooses its detectors its own way).
struct ModelOptions: ParsableArguments {
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

    var store: ModelStore { ModelStore.locate(models: models, cascades: cascades) }

    /// The detector called `name`, with OpenCV's thread count set as asked.
    func make(_ name: String) throws -> any Detector {
        if threads > 0 { OpenCVRuntime.threads = threads }
        return try DetectorCatalog.make(name, models: store)
    }
}

/// Which frames to process.
struct FrameOptions: ParsableArguments {
    @Option(help: "First frame to process (0-based).")
    var start = 0

    @Option(help: "Process frames before this one only (exclusive end).")
    var end: Int?

    @Option(help: "Process every Nth frame (1 to \(Self.largestStride)).")
    var stride = 1

    /// A day of 30 fps video between two frames processed.
    static let largestStride = 2_592_000

    func validate() throws {
        guard start >= 0 else { throw ValidationError("--start must be 0 or more") }
        guard (1...Self.largestStride).contains(stride) else { throw ValidationError("--stride must be between 1 and \(Self.largestStride)") }
        if let end, end <= start { throw ValidationError("--end (\(end)) must be greater than --start (\(start))") }
    }

    var selection: FrameSelection { FrameSelection(start: start, end: end, stride: stride) }
}

/// Writes one line to stdout at once (a consumer at the other end of a pipe sees every line as
/// soon as it is made, and nothing is lost in a buffer if the run fails later).
/// A failed write (a full disk, a reader gone) is an error (`cannot write standard output: ...`).
func printLine(_ line: String) throws(OutputFile.CannotWrite) {
    try OutputFile.standardOutput.write(line: line)
}

/// Writes one line to stderr, unbuffered (a failure is ignored: there is nowhere left to say it).
func printError(_ message: String) {
    let bytes = Array((message + "\n").utf8)
    _ = try? Syscall.writeAll(bytes, to: STDERR_FILENO)
}

/// An error a user can act on: its description is one line naming the input and the problem.
protocol ReportedError: Error, CustomStringConvertible {}
extension FrameSourceError: ReportedError {}
extension DetectorError: ReportedError {}
extension OpenCVError: ReportedError {}
extension OutputFile.CannotWrite: ReportedError {}
extension ControlPageError: ReportedError {}
extension TrackSetupError: ReportedError {}
extension OverviewCalibration.Failure: ReportedError {}
extension OverviewCalibrationFile.Invalid: ReportedError {}
extension BatchReport.Unreadable: ReportedError {}

/// Runs `body`; an error a user can act on becomes one line `docktrack: …` on stderr and exit 1.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as any ReportedError {
        printError("docktrack: \(error)")
        // Stopped by SIGINT or SIGTERM (a wait cut short): the status says so, as a shell expects.
        if let status = RunInterruption.exitStatus { throw ExitCode(status) }
        throw ExitCode.failure
    }
}

/// A failure of the command itself (an output that cannot be written, ...).
struct ToolError: ReportedError {
    var description: String
    init(_ description: String) { self.description = description }
}

/// After a run stopped by SIGINT or SIGTERM has finished its outputs: exit 130 or 143.
func exitIfInterrupted() throws {
    if let status = RunInterruption.exitStatus { throw ExitCode(status) }
}
