import ArgumentParser
import DockTrack
import Foundation

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the cameras (V4L2 video capture devices) with their formats, sizes and frame rates.",
        discussion: """
            Without paths, /dev/video0 ... /dev/video63 are tried by opening them (so emulated \
            devices, e.g. under PipeWire's pw-v4l2, are found too). Pan/tilt/zoom controls are \
            listed when the camera has them: such a camera can be a dock (docksim --backend uvc:PATH).
            """
    )

    @Argument(help: "Devices to describe (default: every /dev/videoN that opens).")
    var paths: [String] = []

    @Flag(help: "One JSON object per device on stdout instead of text.")
    var json = false

    func run() throws {
        let results = CameraDiscovery.describe(paths: paths.isEmpty ? CameraDiscovery.candidatePaths : paths)
        if results.isEmpty {
            // Named devices that are not there are named; the search of /dev/video* says so.
            printError(paths.isEmpty ? "docktrack: no camera found (no /dev/videoN opens)"
                                     : "docktrack: \(paths.joined(separator: ", ")): no such camera (not there, or unplugged)")
            throw ExitCode.failure
        }
        var failed = false
        for result in results {
            switch result {
            case .failure(let error):
                printError("docktrack: \(error)")
                failed = true
            case .success(let camera):
                if json {
                    try printLine(camera.jsonLine)
                } else {
                    try printLine(Self.text(camera))
                }
            }
        }
        if failed && !paths.isEmpty { throw ExitCode.failure }
    }

    static func text(_ camera: CameraDescription) -> String {
        var lines = ["\(camera.path): \(camera.card) (driver \(camera.driver), \(camera.busInfo))"]
        if !camera.capturesVideo || !camera.streams {
            lines.append("  not a video capture device with streaming I/O")
        }
        for format in camera.formats {
            lines.append("  \(format.pixelFormat) \(format.name)\(format.compressed ? " (compressed)" : "")")
            let sizes = format.sizes.map { option in
                "\(option.width)x\(option.height)" + (option.framesPerSecond.isEmpty ? "" : "@" + option.framesPerSecond.map { String(format: "%g", $0) }.joined(separator: "/"))
            }
            if !sizes.isEmpty { lines.append("    " + sizes.joined(separator: " ")) }
        }
        for (name, range) in camera.controls.sorted(by: { $0.key < $1.key }) {
            lines.append("  control \(name) \(range[0])...\(range[1])")
        }
        return lines.joined(separator: "\n")
    }
}
