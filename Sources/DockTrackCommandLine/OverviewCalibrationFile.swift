import DockTrack
import Foundation

/// The file `docktrack calibrate` writes and `track --overview-calibration` reads: the overview
/// camera's ``OverviewMapping`` onto the dock, in TOML as `--config` is.
///
/// ```toml
/// # docktrack calibrate: where the overview camera's picture points the dock
/// dock-camera-fov = 70.0           # degrees across the dock camera's picture when calibrated
/// to-dock-pitch = [ ... 6 numbers ... ]   # overview (x, y) to radians: 1, x, y, x², xy, y²
/// to-dock-yaw = [ ... ]
/// to-overview-x = [ ... ]          # dock (pitch, yaw) in radians to the overview's x, y
/// to-overview-y = [ ... ]
/// checked-error-degrees = 0.20     # on poses the fit left out: mean and largest
/// checked-largest-error-degrees = 0.33
/// ```
package enum OverviewCalibrationFile {
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
        init(_ path: String, _ problem: String) { description = TerminalText.line("\(path): \(problem)") }
    }

    /// The file's text for `mapping`, made with a dock camera of `fieldOfView` degrees.
    package static func text(_ mapping: OverviewMapping, fieldOfView: Double) -> String {
        func list(_ numbers: [Double]) -> String { "[" + numbers.map { String(format: "%.10g", $0) }.joined(separator: ", ") + "]" }
        return """
            # docktrack calibrate: where the overview camera's picture points the dock
            dock-camera-fov = \(String(format: "%.3f", fieldOfView))
            to-dock-pitch = \(list(mapping.toDock[0]))
            to-dock-yaw = \(list(mapping.toDock[1]))
            to-overview-x = \(list(mapping.toOverview[0]))
            to-overview-y = \(list(mapping.toOverview[1]))
            checked-error-degrees = \(String(format: "%.3f", mapping.checkedErrorDegrees.mean))
            checked-largest-error-degrees = \(String(format: "%.3f", mapping.checkedErrorDegrees.largest))

            """
    }

    /// Reads the mapping at `path`, and the dock camera's field of view (degrees) it was made with.
    package static func read(_ path: String) throws -> (mapping: OverviewMapping, fieldOfView: Double) {
        let text: String
        do { text = try SmallTextFile.read(path, largest: 65536) } catch {
            throw Invalid(path, error.reason == "no such file" ? "no such file: make it with docktrack calibrate" : "not a calibration (\(error.reason))")
        }
        return try parse(text, path: path)
    }

    /// The mapping and field of view in `text`, the contents of the file at `path`.
    package static func parse(_ text: String, path: String) throws -> (mapping: OverviewMapping, fieldOfView: Double) {
        let entries: [FlatTOML.Entry]
        do {
            entries = try FlatTOML.entries(text)
        } catch {
            throw Invalid(path, "line \(error.line), column \(error.column): \(error.message)")
        }
        var values: [String: FlatTOML.Entry] = [:]
        for entry in entries { values[entry.key] = entry }
        func number(_ value: FlatTOML.Value) -> Double? {
            switch value {
            case .float(let x) where x.isFinite: return x
            case .integer(let n): return Double(n)
            default: return nil
            }
        }
        func numbers(_ key: String) throws -> [Double] {
            guard let entry = values[key] else { throw Invalid(path, "\(key) is missing: make the file with docktrack calibrate") }
            guard case .array(let items) = entry.value, items.count == 6 else {
                throw Invalid(path, "line \(entry.line): \(key) must be 6 numbers")
            }
            let found = items.compactMap(number)
            guard found.count == 6 else { throw Invalid(path, "line \(entry.line): \(key) must be 6 finite numbers") }
            return found
        }
        func single(_ key: String) throws -> Double {
            guard let entry = values[key] else { throw Invalid(path, "\(key) is missing: make the file with docktrack calibrate") }
            guard let value = number(entry.value), value >= 0 else { throw Invalid(path, "line \(entry.line): \(key) must be a number, 0 or more") }
            return value
        }
        let known: Set<String> = ["dock-camera-fov", "to-dock-pitch", "to-dock-yaw", "to-overview-x", "to-overview-y",
                                  "checked-error-degrees", "checked-largest-error-degrees"]
        if let stranger = entries.first(where: { !known.contains($0.key) }) {
            throw Invalid(path, "line \(stranger.line): \(stranger.key) is not part of a calibration")
        }
        let fieldOfView = try single("dock-camera-fov")
        guard fieldOfView > 1 && fieldOfView < 180 else { throw Invalid(path, "dock-camera-fov must be between 1 and 180 degrees") }
        let mapping = OverviewMapping(toDock: [try numbers("to-dock-pitch"), try numbers("to-dock-yaw")],
                                      toOverview: [try numbers("to-overview-x"), try numbers("to-overview-y")],
                                      checkedErrorDegrees: (try single("checked-error-degrees"), try single("checked-largest-error-degrees")))
        return (mapping, fieldOfView)
    }
}
