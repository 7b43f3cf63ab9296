import ArgumentParser
import DockTrack
import Foundation

/// Which dock to drive and how: shared by track and simulate.
struct DockOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The dock to drive: - (track only: commands as JSON lines on stdout, for a pipe), sim (the simulator, in this process; simulate's default), unix:PATH (the dock protocol on a socket: docksim --socket PATH, or any dock that speaks it), visca-udp:HOST:PORT, visca-serial:DEVICE[@BAUD], uvc:/dev/videoN or onvif:HOST:PORT (an ONVIF PTZ camera's device service). A dock in another process or a device reports where it points: a camera on it is seen from there.",
        valueName: "address"))
    var dock: String?

    @Option(help: ArgumentHelp("How to drive it: velocity (setAngularVelocity every frame, the default: it keeps a moving person framed best) or orientation (absolute moves, about twice a second).", valueName: "kind"))
    var commands: DockCommandKind = .velocity

    @Flag(inversion: .prefixedNo, help: "Look for people when nobody is in view: where the last one was heading, then a slow sweep (pan, then tilt) within the limits, home after --search-time. On by default with a dock that reports where it points, and in simulate.")
    var search: Bool?

    @Option(help: ArgumentHelp("Seconds of searching with nobody found before returning home.", valueName: "seconds"))
    var searchTime = 30.0

    @OptionGroup var onvif: ONVIFOptions

    /// How an ONVIF camera's spaces map to radians, and its credentials.
    func onvifSettings() throws -> ONVIFSettings { try onvif.settings() }

    @Option(help: ArgumentHelp("ONVIF: the camera's preset (its name or token) to return to when nobody is left (after --home-after, or after --search-time with a search): where it points is the home pose. Save one with docktrack onvif HOST:PORT --save-preset NAME.", valueName: "preset"))
    var onvifHomePreset: String?

    func validate() throws {
        if let dock { _ = try address(default: dock) }
        let onvifDock = dock.flatMap { DeviceScheme(of: $0) } == .onvif
        if onvifHomePreset != nil && !onvifDock {
            throw ValidationError("--onvif-home-preset needs --dock onvif:HOST:PORT")
        }
        if onvif.onvifZoom != nil && !onvifDock {
            throw ValidationError("--onvif-zoom needs --dock onvif:HOST:PORT (the virtual dock of reframe and --virtual-camera zooms by itself)")
        }
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

    /// The dock of a track run, driven with these options' kind of commands.
    func apply(to configuration: inout TrackConfiguration) throws {
        var choice = TrackConfiguration.DockChoice()
        choice.address = try address(default: "-")
        choice.search = search
        choice.searchTime = searchTime
        choice.onvif = try onvifSettings()
        choice.onvifHomePreset = onvifHomePreset
        choice.onvifDigitalPTZ = onvif.onvifDigitalPtz
        configuration.dock = choice
        configuration.framing.commands = commands
    }

    /// The command kind and the search (on when `searchByDefault` unless told otherwise).
    func apply(to params: inout FramingController.Params, searchByDefault: Bool) {
        params.commands = commands
        var choice = TrackConfiguration.DockChoice()
        (choice.search, choice.searchTime) = (search, searchTime)
        if let search = choice.searchParams(byDefault: searchByDefault) { params.search = search }
    }
}

extension DockCommandKind: ExpressibleByArgument {}

/// An ONVIF camera's credentials and how its spaces map to degrees: for --dock onvif: and for
/// docktrack onvif.
struct ONVIFOptions: ParsableArguments {
    @Option(help: ArgumentHelp("ONVIF: the user for WS-Security (password digest).", valueName: "user"))
    var onvifUser: String?

    @Option(help: ArgumentHelp("ONVIF: the password (or a file holding it on its first line, with --onvif-password-file).", valueName: "password"))
    var onvifPassword: String?

    @Option(help: ArgumentHelp("ONVIF: read the password from the first line of this file (keeps it out of the process list).", valueName: "path"))
    var onvifPasswordFile: String?

    @Option(help: ArgumentHelp("ONVIF: the pan in degrees at the end of the camera's normalised pan space (x = 1).", valueName: "degrees"))
    var onvifPanRange = 170.0

    @Option(help: ArgumentHelp("ONVIF: the tilt in degrees at y = 1 (up).", valueName: "degrees"))
    var onvifTiltRange = 90.0

    @Option(help: ArgumentHelp("ONVIF: how far the camera moves in its normalised position space (-1...1) per second at full continuous-move speed (ipycam: 1).", valueName: "units"))
    var onvifSpeed = 0.6

    @Option(help: ArgumentHelp("ONVIF: the camera's magnification at the end of its zoom space (zoom 1; 1 at zoom 0, linear between; ipycam: 4). Zoom becomes part of framing: one person head and shoulders, a group whole, the widest after 4 s with nobody. --fov is then the field of view at the widest zoom.", valueName: "magnification"))
    var onvifZoom: Double?

    @Flag(help: ArgumentHelp("ONVIF: the camera's PTZ is digital (a window cropped from its wider picture, as ipycam): pan and tilt move the window within the picture, so how far they turn shrinks with the zoom, to nothing at zoom 0 (needs --onvif-zoom)."))
    var onvifDigitalPtz = false

    /// How an ONVIF camera's spaces map to radians, and its credentials.
    func settings() throws -> ONVIFSettings {
        var settings = ONVIFSettings()
        settings.panRange = onvifPanRange
        settings.tiltRange = onvifTiltRange
        settings.fullSpeed = onvifSpeed
        settings.user = onvifUser
        settings.password = onvifPassword
        settings.maximumMagnification = onvifZoom
        if let file = onvifPasswordFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw ValidationError("--onvif-password-file: cannot read \(file)") }
            settings.password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        return settings
    }

    func validate() throws {
        for (name, value) in [("--onvif-pan-range", onvifPanRange), ("--onvif-tilt-range", onvifTiltRange), ("--onvif-speed", onvifSpeed)]
        where !(value.isFinite && value > 0 && value <= 3600) {
            throw ValidationError("\(name) must be a number above 0")
        }
        if let zoom = onvifZoom, !(zoom.isFinite && zoom >= 1 && zoom <= 1000) {
            throw ValidationError("--onvif-zoom must be a magnification from 1 to 1000")
        }
        if onvifDigitalPtz && onvifZoom == nil { throw ValidationError("--onvif-digital-ptz needs --onvif-zoom (the largest magnification)") }
    }
}
