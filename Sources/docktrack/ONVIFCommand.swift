import ArgumentParser
import DockTrack
import Foundation

/// An ONVIF PTZ camera by hand: where it points, its presets, a preset saved or gone to, its
/// home position, a turn. For setting up what `track --dock onvif:` uses (--onvif-home-preset).
struct ONVIFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onvif",
        abstract: "Read and move an ONVIF PTZ camera: its pose, its presets, a preset saved or gone to, home, a turn.",
        discussion: """
            Each action runs in the order below and prints one JSON line on stdout; with no \
            action, --status. Angles are degrees (pan right, tilt up positive) through \
            --onvif-pan-range and --onvif-tilt-range, as with track --dock onvif:. Examples:
              docktrack onvif 192.168.1.20:80 --onvif-user admin --onvif-password-file pw --presets
              docktrack onvif 192.168.1.20:80 --turn=-20,0 --save-preset door
              docktrack track rtsp://192.168.1.20/stream --dock onvif:192.168.1.20:80 --onvif-home-preset door
            """
    )

    @Argument(help: ArgumentHelp("The camera's ONVIF device service: HOST:PORT (often port 80, 8000 or 8080).", valueName: "host:port"))
    var camera: String

    @OptionGroup var onvif: ONVIFOptions

    @Option(help: ArgumentHelp("Turn by PAN,TILT degrees from where it points (RelativeMove); write --turn=-20,5 when PAN is negative.", valueName: "pan,tilt"))
    var turn: String?

    @Option(help: ArgumentHelp("Go to the preset with this name or token (GotoPreset).", valueName: "preset"))
    var goToPreset: String?

    @Flag(help: "Go to the camera's home position (GotoHomePosition).")
    var home = false

    @Option(help: ArgumentHelp("Save where it points (after the moves above, once they settle: --settle) as a preset of this name (SetPreset).", valueName: "name"))
    var savePreset: String?

    @Option(help: ArgumentHelp("Seconds to wait after a move before saving or reading the pose.", valueName: "seconds"))
    var settle = 1.0

    @Flag(help: "List the presets: token, name and where each points.")
    var presets = false

    @Flag(help: "Print where it points (GetStatus).")
    var status = false

    /// The turn of --turn in radians (x tilt down, y pan right, as every dock orientation).
    var turnBy: DockOrientation? {
        get throws {
            guard let turn else { return nil }
            let parts = turn.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let pan = parts[0], let tilt = parts[1], pan.isFinite, tilt.isFinite, abs(pan) <= 360, abs(tilt) <= 360 else {
                throw ValidationError("--turn takes PAN,TILT in degrees (within -360...360), e.g. -20,5")
            }
            return DockOrientation(x: -tilt * .pi / 180, y: pan * .pi / 180, z: 0)
        }
    }

    func validate() throws {
        _ = try turnBy
        guard settle.isFinite && settle >= 0 && settle <= 60 else { throw ValidationError("--settle must be 0 to 60 seconds") }
        if let savePreset, savePreset.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--save-preset needs a name") }
        let parts = camera.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]), (1...65535).contains(port), !parts[0].isEmpty else {
            throw ValidationError("expected HOST:PORT, e.g. 192.168.1.20:80")
        }
    }

    func run() throws {
        try reportingErrors {
            do {
                try act()
            } catch DockError.notConnected {
                throw ToolError("onvif \(camera): no answer from an ONVIF device service there (the camera's HTTP port: often 80, 8000 or 8080)")
            } catch let error as DockError {
                throw ToolError("onvif \(camera): \(error)")
            }
        }
    }

    private func act() throws {
        let device = try DockBackend.openONVIF("onvif:\(camera)", onvif: onvif.settings())
        let output = try LineOutput(path: "-")
        func degrees(_ orientation: DockOrientation) -> [String: Double] {
            ["pan": ((orientation.y * 180 / .pi) * 1000).rounded() / 1000, "tilt": ((-orientation.x * 180 / .pi) * 1000).rounded() / 1000]
        }
        func emit(_ record: [String: Any]) throws {
            let data = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
            try output.write(String(decoding: data, as: UTF8.self))
        }
        var moved = false
        if let turn = try turnBy {
            try device.turn(by: turn)
            try emit(["action": "turn", "by": degrees(turn)])
            moved = true
        }
        if let goToPreset {
            try device.goToPreset(goToPreset)
            try emit(["action": "goToPreset", "preset": goToPreset])
            moved = true
        }
        if home {
            try device.goHome()
            try emit(["action": "home"])
            moved = true
        }
        if moved && (savePreset != nil || status || presets) { Thread.sleep(forTimeInterval: settle) }
        if let savePreset {
            let token = try device.savePreset(named: savePreset)
            try emit(["action": "savePreset", "name": savePreset, "token": token])
        }
        if presets {
            let list: [[String: Any]] = try device.presets().map { preset in
                var record: [String: Any] = ["token": preset.token, "name": preset.name]
                if let orientation = preset.orientation { record.merge(degrees(orientation)) { $1 } }
                if let zoom = preset.zoom { record["zoom"] = zoom }
                return record
            }
            try emit(["presets": list])
        }
        if status || !(moved || savePreset != nil || presets) {
            let (orientation, zoom) = try device.status()
            var record: [String: Any] = degrees(orientation)
            if let zoom { record["zoom"] = zoom }
            try emit(["status": record])
        }
    }
}
