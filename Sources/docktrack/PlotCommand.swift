import ArgumentParser
import DockTrack
import Foundation

struct PlotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Plot a trace (docktrack track/simulate --trace, docksim --trace) as a PNG.",
        discussion: "Panels: pan and tilt with their targets (degrees), speeds and commands (degrees/s), then any other numeric column (battery)."
    )

    @Argument(help: "A tab-separated trace file.")
    var trace: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The PNG to write (default: the trace's name with .png).", valueName: "file"))
    var output: String?

    @Option(help: "Width of the picture in pixels.")
    var width = 960

    func validate() throws {
        guard (200...8000).contains(width) else { throw ValidationError("--width must be between 200 and 8000") }
    }

    func run() throws {
        guard FileManager.default.fileExists(atPath: trace) else {
            printError("docktrack: \(trace): no such file")
            throw ExitCode.failure
        }
        guard let text = try? String(contentsOfFile: trace, encoding: .utf8) else {
            printError("docktrack: \(trace): cannot be read as text")
            throw ExitCode.failure
        }
        OutputFile.registerInput(trace)
        let out = output ?? ((trace as NSString).deletingPathExtension + ".png")
        do {
            let plot = try TracePlot(tsv: text, name: trace)
            try plot.render(width: width).write(to: out)
            printError("docktrack: plot written to \(out)")
        } catch let error as TracePlot.Failure {
            printError("docktrack: \(error)")
            throw ExitCode.failure
        } catch let error as OpenCVError {
            printError("docktrack: \(out): \(error)")
            throw ExitCode.failure
        }
    }
}
