import ArgumentParser
import DockTrack
import Foundation

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Report on a batch of reframe runs (tools/reframe-batch.sh's OUTDIR): counts, failures, time and speed, and a page with pictures.",
        discussion: """
            Reads OUTDIR/*.json (one line per input). Prints the files reframed and failed, the video \
            time reframed, the batch's wall time (from the first run's start to the last one's end) \
            and its speed in times real time, then each failure with its error. Writes \
            OUTDIR/report.html: for each file reframed, pictures of its source and of the reframed \
            video at the same moments (in OUTDIR/report/).
            """
    )

    @Argument(help: "The batch's output folder.")
    var folder: String

    @Flag(help: "Print the report only; write no page.")
    var noPage = false

    func run() throws {
        try reportingErrors {
            let report = try BatchReport(folder: folder)
            for line in report.lines { try printLine(line) }
            if !noPage { printError("docktrack: report page written to \(try report.writePage())") }
        }
    }
}
