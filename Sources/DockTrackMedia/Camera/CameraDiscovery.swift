import DockTrackCore
import CV4L2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds cameras: V4L2 nodes /dev/video0...63 that open (tried by opening, not by listing /dev,
/// so emulated nodes are found too).
package enum CameraDiscovery {
    package static let candidatePaths = (0..<64).map { "/dev/video\($0)" }

    /// Descriptions of the nodes among `paths` that open and answer QUERYCAP.
    package static func describe(paths: [String] = candidatePaths) -> [Result<CameraDescription, CameraError>] {
        paths.compactMap { path in
            let device: V4L2DeviceFile
            do throws(V4L2Error) { device = try V4L2DeviceFile(path: path) } catch {
                if error.code == ENOENT || error.code == ENODEV || error.code == ENXIO { return nil }
                return .failure(CameraError.from(error, path: path))
            }
            do throws(V4L2Error) { return .success(try CameraQuery.describe(device)) } catch {
                return .failure(CameraError.from(error, path: path))
            }
        }
    }

    /// Whether `path` names a V4L2 device node rather than a file.
    package static func isDevicePath(_ path: String) -> Bool {
        path.hasPrefix("/dev/video") || path.hasPrefix("/dev/v4l/")
    }
}
