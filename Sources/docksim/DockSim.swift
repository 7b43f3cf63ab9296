import ArgumentParser
import DockTrack
import DockTrackCommandLine
import Foundation
#if canImport(Glibc)
import Glibc
#endif

@main
struct DockSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docksim",
        abstract: "A simulated pan/tilt dock that speaks DockTrack's dock protocol (org.docktrack.dock/1).",
        discussion: """
            Pipe mode (default): reads requests on stdin, e.g. `docktrack track clip.mp4 | docksim`, \
            and answers on stdout. The simulation runs on the commands' own "time" (a recorded \
            clip plays faster than real time); lines without one use the time of the last line.
            Socket mode (--socket PATH): serves a Unix socket on the real clock, which starts when the \
            first client connects (script times count from then); one client holds the session at \
            a time, and gets a motion state every --state-interval seconds.
            Every malformed or unknown line gets {"type":"error","code":…,"message":…,"line":N} \
            and the session goes on. --script plays events at set times: one JSON object per line, \
            e.g. {"at":2.0,"event":"button","id":1,"pressed":true}, undocked, docked, cameraShutter, \
            cameraFlip, {"event":"cameraZoom","factor":2}, {"event":"charging","enabled":true}.
            """
    )

    @Option(help: ArgumentHelp("Serve this Unix socket instead of stdin/stdout.", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("Write a trace: one tab-separated line per request (time, pan, tilt, pan speed, tilt speed, battery).", valueName: "file"))
    var trace: String?

    @Option(help: ArgumentHelp("Events to play at set times (JSON Lines).", valueName: "file"))
    var script: String?

    @Option(help: ArgumentHelp("Also drive a real device: visca-udp:HOST:PORT, visca-serial:PATH[@BAUD] or uvc:/dev/videoN.", valueName: "backend"))
    var backend: String?

    @Option(help: "Battery level at start, 0...1.")
    var battery = 0.8

    @Flag(help: "Start on a charger.")
    var charging = false

    @Option(parsing: .singleValue, help: ArgumentHelp("Another battery, named: NAME:LEVEL, or NAME:LEVEL:notChargeable for one that cannot charge (a remote's cell). Repeatable; getBattery answers a line per battery.", valueName: "name:level"))
    var otherBattery: [String] = []

    @OptionGroup(title: "Motors") var motors: DockLimitOptions

    @Option(help: "Seconds between motion states sent to a socket client.")
    var stateInterval = 0.1

    @Option(help: ArgumentHelp("Stop this many seconds after starting (socket mode).", valueName: "seconds"))
    var duration: Double?

    func validate() throws {
        guard (0...1).contains(battery) else { throw ValidationError("--battery must be between 0 and 1") }
        for text in otherBattery where BatteryState(spec: text) == nil {
            throw ValidationError("--other-battery takes NAME:LEVEL or NAME:LEVEL:notChargeable with LEVEL in 0...1, not '\(text)'")
        }
        guard stateInterval.isFinite, stateInterval > 0, stateInterval <= 3600 else {
            throw ValidationError("--state-interval must be a number of seconds from above 0 to 3600")
        }
        if let duration, !(duration.isFinite && duration > 0) { throw ValidationError("--duration must be a number of seconds above 0") }
    }

    func run() throws {
        // SIGINT and SIGTERM from here on end the run as the end of its input does: the dock
        // and its --backend are told to stop, the trace is whole.
        RunInterruption.install()
        let limits = motors.limits()
        var events: [ScriptedEvent] = []
        if let script {
            guard let text = try? String(contentsOfFile: script, encoding: .utf8) else {
                FileHandle.standardError.write(Data("docksim: \(script): cannot be read\n".utf8))
                throw ExitCode.failure
            }
            for (i, line) in text.split(separator: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                guard let event = try? JSONDecoder().decode(ScriptedEvent.self, from: Data(line.utf8)) else {
                    FileHandle.standardError.write(Data("docksim: \(script) line \(i + 1): not an event ({\"at\":seconds,\"event\":name,...})\n".utf8))
                    throw ExitCode.failure
                }
                events.append(event)
            }
        }
        var hardware: (any DockHardware)?
        if let backend {
            do {
                hardware = try DockBackend.open(backend)
            } catch {
                FileHandle.standardError.write(Data("docksim: --backend \(backend): \(error)\n".utf8))
                throw ExitCode.failure
            }
        }
        // The simulated motors turn only about the axes a device behind them has.
        var session = DockSession(
            identity: AccessoryIdentity(name: "DockSim", identifier: UUID(), firmwareVersion: "1.0.0", hardwareModel: "docksim-pt1"),
            dock: SimulatedDock(limits: hardware.map { limits.withAxes(of: $0.capabilities) } ?? limits),
            battery: BatteryState(level: battery, charging: charging),
            otherBatteries: otherBattery.compactMap { BatteryState(spec: $0) }, script: events)
        session.hardware = hardware
        let traceFile: OutputFile?
        do {
            traceFile = try trace.map { path throws(OutputFile.CannotWrite) in
                let file = try OutputFile.open(path)
                try file.write(line: "time\tpan\ttilt\tpan_speed\ttilt_speed\tbattery")
                return file
            }
        } catch {
            printError("docksim: \(error)")
            throw ExitCode.failure
        }
        if let socket {
            var server = DockSocketServer(path: socket, session: session, trace: traceFile, stateInterval: stateInterval, duration: duration,
                                          stopped: { RunInterruption.requested }) {
                FileHandle.standardError.write(Data("docksim: \($0)\n".utf8))
            }
            do {
                try server.serve()
                if RunInterruption.requested { FileHandle.standardError.write(Data("docksim: stopped on a signal\n".utf8)) }
            } catch {
                FileHandle.standardError.write(Data("docksim: \(error)\n".utf8))
                throw ExitCode.failure
            }
        } else {
            var server = DockPipeServer(session: session, trace: traceFile)
            let summary = server.serve(stopped: { RunInterruption.requested })
            let dock = server.session.dock
            printError(String(format: "docksim: %d requests, %d errors; pan %.1f°, tilt %.1f° at %@ s%@",
                              summary.requests, summary.errors, dock.position.y * 180 / .pi, dock.position.x * 180 / .pi,
                              JSONLine.number(dock.time, digits: 2), summary.outputClosed ? "; stdout was closed" : ""))
            if let error = summary.traceError {
                printError("docksim: \(error)")
                throw ExitCode.failure
            }
            if let status = RunInterruption.exitStatus { throw ExitCode(status) }
        }
    }
}

/// One line on stderr (a failure to write it is ignored: there is nowhere left to say it).
func printError(_ message: String) {
    _ = try? Syscall.writeAll(Array((message + "\n").utf8), to: STDERR_FILENO)
}
