import ArgumentParser
import DockTrack
import DockTrackCommandLine
import Foundation

/// How to frame and what the dock can do: shared by the commands that drive a dock.
struct FramingOptions: ParsableArguments {
    @OptionGroup var framingMode: FramingModeOption

    @Option(help: ArgumentHelp("Region of interest to keep subjects in: x,y,width,height in unit coordinates, origin at the upper-left.", valueName: "x,y,w,h"))
    var roi: String?

    @Option(help: "The camera's horizontal field of view in degrees (the vertical one follows from the picture's aspect ratio).")
    var fov = 70.0

    @OptionGroup var limits: DockLimitOptions

    @Option(help: "Seconds without anyone in view before the dock returns to its home pose.")
    var homeAfter = 4.0

    func validate() throws {
        if let roi, UnitRect(upperLeftText: roi) == nil { throw ValidationError("--roi takes x,y,width,height in 0...1, not '\(roi)'") }
        guard fov > 1 && fov < 179 else { throw ValidationError("--fov must be between 1 and 179 degrees") }
        guard homeAfter > 0 else { throw ValidationError("--home-after must be positive") }
    }

    /// The framing of a track run (its camera is made when the picture's size is known).
    func apply(to configuration: inout TrackConfiguration) {
        configuration.framing = params(for: ImageSize(width: 1280, height: 720))
        configuration.fieldOfView = fov * .pi / 180
    }

    /// The controller's parameters for pictures of `size`.
    func params(for size: ImageSize) -> FramingController.Params {
        var params = FramingController.Params()
        params.mode = framingMode.mode
        if let roi { params.regionOfInterest = UnitRect(upperLeftText: roi)! }
        params.camera = CameraModel(horizontalFieldOfView: fov * .pi / 180, size: size)
        params.limits = limits.limits(from: params.limits)
        params.homeAfter = homeAfter
        return params
    }
}

