import ArgumentParser
import DockTrack
import DockTrackCommandLine
import Foundation

struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Calibrate an overview camera onto a dock: where each point of the overview's picture points the dock.",
        discussion: """
            The dock is moved through 13 poses within --pan-range and --tilt-range of its home (a \
            3 x 3 grid, then 4 between to check). At each, once the dock reports it is there and \
            still, what its camera sees is found in the overview by their features (ORB features and a \
            homography, with OpenCV); the mapping from the overview's picture to the dock's angles is \
            fitted to the 9 and checked on the 4. The error on those is printed in degrees and the \
            mapping saved (TOML) for track --overview SRC --overview-calibration FILE. The overview \
            must see what the dock's camera sees at every pose: choose ranges that stay within its view. \
            The dock is left at home.
            """
    )

    @Option(help: ArgumentHelp("The overview camera: a camera such as /dev/video1, or a stream URL.", valueName: "source"))
    var overview: String

    @Option(help: ArgumentHelp("The camera on the dock: a camera such as /dev/video0, or a stream URL.", valueName: "source"))
    var camera: String

    @Option(help: ArgumentHelp("The dock: unix:PATH (docksim or any dock speaking the protocol), visca-udp:HOST:PORT, visca-serial:DEVICE, uvc:/dev/videoN or onvif:HOST:PORT.", valueName: "address"))
    var dock: String

    @Option(help: "Degrees across the picture of the camera on the dock (as track's --fov).")
    var fov = 70.0

    @Option(help: "Degrees either way from home the dock pans through (the overview must see that far).")
    var panRange = 30.0

    @Option(help: "Degrees either way from home the dock tilts through.")
    var tiltRange = 15.0

    @Option(help: "Seconds to wait at each pose once the dock is still, before the pictures are taken.")
    var settle = 1.0

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to save the calibration.", valueName: "file"))
    var output = "overview-calibration.toml"

    @OptionGroup var onvif: ONVIFOptions

    func validate() throws {
        guard fov > 1 && fov < 180 else { throw ValidationError("--fov must be between 1 and 180 degrees") }
        guard panRange > 0 && panRange <= 170, tiltRange > 0 && tiltRange <= 80 else {
            throw ValidationError("--pan-range must be in 0...170 and --tilt-range in 0...80 degrees (and more than 0)")
        }
        guard settle >= 0 && settle <= 30 else { throw ValidationError("--settle must be between 0 and 30 seconds") }
        do { _ = try DockAddress(dock) } catch { throw ValidationError("--dock: \(error)") }
        guard DockAddress.commandStream != (try? DockAddress(dock)) else { throw ValidationError("--dock must say where it points: not -") }
    }

    func run() throws {
        RunInterruption.install()
        try reportingErrors {
            let notes: @Sendable (String) -> Void = { printError("docktrack: \($0)") }
            var live = TrackConfiguration.LiveOptions()
            live.frameTimeout = 10
            let dockCamera = try TrackConfiguration.Input.named(camera).open(live, notes: notes, stopping: { RunInterruption.requested })
            let overviewCamera = try TrackConfiguration.Input.named(overview).open(live, notes: notes, stopping: { RunInterruption.requested })
            defer {
                (dockCamera as? any LiveFrameSource)?.stop()
                (overviewCamera as? any LiveFrameSource)?.stop()
            }
            let origin = MonotonicClock.now()
            let clock: @Sendable () -> Double = { MonotonicClock.now() - origin }
            var limits = DockLimits.standard
            limits.yaw.range = -panRange * .pi / 180...panRange * .pi / 180
            limits.pitch.range = -tiltRange * .pi / 180...tiltRange * .pi / 180
            let dockHandle = try DockAddress(dock).open(limits: limits, home: .zero, clock: clock, onvif: try onvif.settings()) { _ in }
            var rig = DockCalibrationRig(dock: dockHandle, dockCamera: dockCamera, overview: overviewCamera, clock: clock, settle: settle)
            defer {
                // Home (unless stopped), then still.
                if !RunInterruption.requested { try? rig.move(to: .zero) }
                RunEnd.end(&rig.dock, at: clock())
            }
            let cameraModel = CameraModel(horizontalFieldOfView: fov * .pi / 180, size: dockCamera.info.size)
            rig.stopping = { RunInterruption.requested }
            let mapping: OverviewMapping
            do {
                mapping = try OverviewCalibration.calibrate(rig: &rig, camera: cameraModel, limits: limits) { look in
                    let pose = String(format: "pitch %+.1f° yaw %+.1f°", look.pose.x * 180 / .pi, look.pose.y * 180 / .pi)
                    printError("docktrack: pose \(pose): " + (look.homography == nil ? "not found in the overview" : "found") + " (\(look.inliers) features agree)")
                }
            } catch where RunInterruption.requested {
                try exitIfInterrupted()
                throw error
            }
            let file = try LineOutput(path: output)
            try file.write(OverviewCalibrationFile.text(mapping, fieldOfView: fov))
            printError("docktrack: calibrated: " + String(format: "%.2f° off on average, %.2f° at most", mapping.checkedErrorDegrees.mean,
                                                          mapping.checkedErrorDegrees.largest) + ", on the 4 poses not fitted; saved to \(output)")
        }
    }
}
