import ArgumentParser
import DockTrack

/// What the dock can do, as both executables take it on the command line: `docktrack`'s
/// framing limits and `docksim`'s simulated motors.
package struct DockLimitOptions: ParsableArguments {
    @Option(help: "Pan (yaw) maximum speed in degrees per second.")
    package var maxPanSpeed = 170.0

    @Option(help: "Tilt (pitch) range in degrees either side of level.")
    package var tiltRange = 30.0

    @Option(help: "Tilt (pitch) maximum speed in degrees per second.")
    package var maxTiltSpeed = 85.0

    package init() {}

    package func validate() throws {
        guard maxPanSpeed > 0, maxTiltSpeed > 0, maxPanSpeed.isFinite, maxTiltSpeed.isFinite, tiltRange >= 0, tiltRange <= 90 else {
            throw ValidationError("speeds must be positive and --tilt-range between 0 and 90 degrees")
        }
    }

    /// `base` with these speeds and tilt range (accelerations and the pan range kept).
    package func limits(from base: DockLimits = .standard) -> DockLimits {
        var limits = base
        let degree = Double.pi / 180
        limits.yaw.maximumSpeed = maxPanSpeed * degree
        limits.pitch = AxisLimits(range: -tiltRange * degree...tiltRange * degree, maximumSpeed: maxTiltSpeed * degree,
                                  maximumAcceleration: base.pitch.maximumAcceleration)
        return limits
    }
}
