import ArgumentParser
import DockTrack
import Foundation

/// Which dock to drive and how: shared by track and simulate.
struct DockOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The dock to drive: - (commands as JSON lines on stdout, for a pipe), sim (the simulator, in this process), unix:PATH (the dock protocol on a socket: docksim --socket PATH, or any dock that speaks it), visca-udp:HOST:PORT, visca-serial:DEVICE[@BAUD] or uvc:/dev/videoN. A dock in another process or a device reports where it points: a camera on it is seen from there.",
        valueName: "address"))
    var dock: String?

    @Option(help: ArgumentHelp("How to drive it: velocity (setAngularVelocity every frame, the default: it keeps a moving person framed best) or orientation (absolute moves, about twice a second).", valueName: "kind"))
    var commands: DockCommandKind = .velocity

    @Flag(inversion: .prefixedNo, help: "Look for people when nobody is in view: where the last one was heading, then a slow sweep (pan, then tilt) within the limits, home after --search-time. On by default with a dock that reports where it points, and in simulate.")
    var search: Bool?

    @Option(help: ArgumentHelp("Seconds of searching with nobody found before returning home.", valueName: "seconds"))
    var searchTime = 30.0

    func validate() throws {
        if let dock { _ = try address(default: dock) }
        guard searchTime > 0 && searchTime.isFinite else { throw ValidationError("--search-time must be a positive number of seconds") }
    }

    /// The dock's address (`fallback` when --dock is not given).
    func address(default fallback: String) throws -> DockAddress {
        do {
            return try DockAddress(dock ?? fallback)
        } catch {
            throw ValidationError("--dock: \(error)")
        }
    }

    /// The command kind and the search (on when `searchByDefault` unless told otherwise).
    func apply(to params: inout FramingController.Params, searchByDefault: Bool) {
        params.commands = commands
        if search ?? searchByDefault {
            var search = SubjectSearch.Params()
            search.giveUpAfter = searchTime
            params.search = search
        }
    }
}

extension DockCommandKind: ExpressibleByArgument {}
