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

    @OptionGroup(title: "Motors") var motors: DockLimitOptions

    @Option(help: "Seconds between motion states sent to a socket client.")
    var stateInterval = 0.1

    @Option(help: ArgumentHelp("Stop this many seconds after starting (socket mode).", valueName: "seconds"))
    var duration: Double?

    func validate() throws {
        guard (0...1).contains(battery) else { throw ValidationError("--battery must be between 0 and 1") }
        guard stateInterval > 0 else { throw ValidationError("--state-interval must be positive") }
    }

    func run() throws {
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
        var session = DockSession(
            identity: AccessoryIdentity(name: "DockSim", identifier: UUID(), firmwareVersion: "1.0.0", hardwareModel: "docksim-pt1"),
            dock: SimulatedDock(limits: limits), battery: BatteryState(level: battery, charging: charging), script: events)
        if let backend {
            do {
                session.hardware = try Self.openBackend(backend)
            } catch {
                FileHandle.standardError.write(Data("docksim: --backend \(backend): \(error)\n".utf8))
                throw ExitCode.failure
            }
        }
        let traceFile = try trace.map { path throws -> FileHandle in
            guard FileManager.default.createFile(atPath: path, contents: Data("time\tpan\ttilt\tpan_speed\ttilt_speed\tbattery\n".utf8)),
                  let handle = FileHandle(forWritingAtPath: path) else {
                FileHandle.standardError.write(Data("docksim: \(path): cannot be written\n".utf8))
                throw ExitCode.failure
            }
            handle.seekToEndOfFile()
            return handle
        }
        if let socket {
            var server = SocketServer(path: socket, session: session, trace: traceFile, stateInterval: stateInterval, duration: duration)
            do {
                try server.serve()
            } catch {
                FileHandle.standardError.write(Data("docksim: \(error)\n".utf8))
                throw ExitCode.failure
            }
        } else {
            var server = PipeServer(session: session, trace: traceFile)
            server.serve()
        }
    }
}

extension DockSim {
    /// The device named by a --backend value.
    static func openBackend(_ spec: String) throws -> any DockHardware {
        let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw DockError.invalidRequest("expected KIND:ADDRESS") }
        switch parts[0] {
        case "visca-udp":
            let hostPort = parts[1].split(separator: ":").map(String.init)
            guard hostPort.count == 2, let port = UInt16(hostPort[1]) else { throw DockError.invalidRequest("expected visca-udp:HOST:PORT") }
            return VISCADock(transport: try VISCAOverUDP(host: hostPort[0], port: port))
        case "visca-serial":
            let pathBaud = parts[1].split(separator: "@").map(String.init)
            return VISCADock(transport: try VISCAOverSerial(path: pathBaud[0], baud: pathBaud.count > 1 ? Int(pathBaud[1]) ?? 9600 : 9600))
        case "uvc":
            return try UVCDock(path: parts[1])
        default:
            throw DockError.invalidRequest("unknown backend '\(parts[0])' (visca-udp, visca-serial, uvc)")
        }
    }
}

/// Writes one trace line for the session's present state.
func writeTrace(_ trace: FileHandle?, _ session: DockSession) {
    guard let trace else { return }
    let d = session.dock
    trace.write(Data(String(format: "%.3f\t%.5f\t%.5f\t%.5f\t%.5f\t%.4f\n", d.time, d.position.y, d.position.x, d.velocity.y, d.velocity.x, session.battery.level).utf8))
}

/// stdin → session → stdout, on the requests' own clock. The replies to each request are
/// written (not buffered) before the next is read, so a program talking to docksim over pipes
/// gets its answers at once.
struct PipeServer {
    var session: DockSession
    let trace: FileHandle?

    mutating func serve() {
        signal(SIGPIPE, SIG_IGN)  // a reader that goes away ends the run below, with a message
        var time = 0.0, requests = 0
        var output = true
        for item in LineReader(fileDescriptor: STDIN_FILENO) {
            let parsed = DockRequest.parse(item)
            if case .success(let request)? = parsed, let t = request.time { time = max(time, t) }
            requests += 1
            let replies = session.handle(parsed, at: time)
            writeTrace(trace, session)
            if !replies.isEmpty && !Self.write(replies) {
                output = false
                break
            }
        }
        if output { _ = Self.write([session.motionStateLine(), session.battery.jsonLine]) }
        let p = session.dock.position
        FileHandle.standardError.write(Data(String(format: "docksim: %d requests, %d errors; pan %.1f°, tilt %.1f° at %.2f s%@\n",
                                                   requests, session.errorCount, p.y * 180 / .pi, p.x * 180 / .pi, session.dock.time,
                                                   output ? "" : "; stdout was closed").utf8))
    }

    /// Writes lines to stdout now; false when stdout is gone.
    private static func write(_ lines: [String]) -> Bool {
        (try? Syscall.writeAll(Array((lines.joined(separator: "\n") + "\n").utf8), to: STDOUT_FILENO)) != nil
    }
}
