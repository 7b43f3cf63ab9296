import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// stdin → session → stdout, on the requests' own clock. The replies to each request are
/// written (not buffered) before the next is read, so a program talking to docksim over pipes
/// gets its answers at once.
package struct DockPipeServer {
    package private(set) var session: DockSession
    let trace: OutputFile?
    let input: Int32
    let output: Int32

    /// What a run did.
    package struct Summary: Sendable {
        package var requests: Int
        package var errors: Int
        /// Whether the output was closed before the input ended.
        package var outputClosed: Bool
        /// The trace that could not be written (the run ended there).
        package var traceError: OutputFile.CannotWrite?
    }

    package init(session: DockSession, trace: OutputFile?, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.session = session
        self.trace = trace
        self.input = input
        self.output = output
    }

    /// Serves until the input ends, the output is closed or `stopped` says so (docksim: a
    /// signal); the dock is left still and the last motion state and battery go out at the end.
    package mutating func serve(stopped: (() -> Bool)? = nil) -> Summary {
        var time = 0.0, requests = 0
        var output = true
        var traceError: OutputFile.CannotWrite?
        for item in LineReader(fileDescriptor: input, stopped: stopped) {
            let parsed = DockRequest.parse(item)
            if case .success(let request)? = parsed, let t = request.time { time = max(time, t) }
            requests += 1
            let replies = session.handle(parsed, at: time)
            do {
                try session.writeTrace(to: trace)
            } catch {
                traceError = error
            }
            if !replies.isEmpty && !write(replies) {
                output = false
                break
            }
            if traceError != nil { break }
        }
        // End of input (or a stop): the dock (and a device behind it) is left still.
        _ = session.sessionEnded(at: time)
        if traceError == nil {
            do { try session.traceComingToRest(after: time, to: trace) } catch { traceError = error }
        }
        if output { _ = write([session.motionStateLine()] + session.batteryLines) }
        return Summary(requests: requests, errors: session.errorCount, outputClosed: !output, traceError: traceError)
    }

    /// Writes lines to the output now; false when it is gone.
    private func write(_ lines: [String]) -> Bool {
        (try? Syscall.writeAll(Array((lines.joined(separator: "\n") + "\n").utf8), to: output)) != nil
    }
}
