import DockTrackCore
import DockTrackSystem
import Foundation

extension DockSession {
    /// Writes one line of the motor trace for the present state: time, pan, tilt, pan speed,
    /// tilt speed, battery (tab-separated, radians).
    package func writeTrace(to trace: OutputFile?) throws(OutputFile.CannotWrite) {
        guard let trace else { return }
        let d = dock
        try trace.write(line: String(format: "%.3f\t%.5f\t%.5f\t%.5f\t%.5f\t%.4f", d.time, d.position.y, d.position.x, d.velocity.y, d.velocity.x, battery.level))
    }
}
