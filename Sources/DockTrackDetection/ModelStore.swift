import Foundation

/// Where detector model files are found.
///
/// - `modelsDirectory` holds the files DockTrack ships (`models/` of the repository): the
///   res10 SSD face detector. Found, in order: the explicit directory given, the environment
///   variable `DOCKTRACK_MODELS`, `share/docktrack/models` under the executable's prefix (what
///   `make install` writes: `PREFIX/bin/docktrack` finds `PREFIX/share/docktrack/models`), a
///   `models/` folder beside the executable or in one of its parent folders (so a build inside
///   the repository finds the repository's), `./models`.
/// - `cascadesDirectory` holds OpenCV's Haar and LBP cascades from Debian's `opencv-data`
///   (`/usr/share/opencv4`), or `DOCKTRACK_CASCADES`.
public struct ModelStore: Sendable, Equatable {
    public var modelsDirectory: String
    public var cascadesDirectory: String

    public init(modelsDirectory: String, cascadesDirectory: String) {
        self.modelsDirectory = modelsDirectory
        self.cascadesDirectory = cascadesDirectory
    }

    /// The file that marks a folder as DockTrack's models folder.
    static let markerFile = "res10_300x300_ssd_deploy.prototxt"

    /// The store found by the search order above; `models` and `cascades` override it.
    public static func locate(models: String? = nil, cascades: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment) -> ModelStore {
        let modelsDirectory = models ?? environment["DOCKTRACK_MODELS"] ?? searchModelsDirectory() ?? "models"
        let cascadesDirectory = cascades ?? environment["DOCKTRACK_CASCADES"]
            ?? ["/usr/share/opencv4", "/usr/share/opencv", "/usr/local/share/opencv4"].first {
                fileExists("\($0)/haarcascades/haarcascade_frontalface_default.xml")
            } ?? "/usr/share/opencv4"
        return ModelStore(modelsDirectory: modelsDirectory, cascadesDirectory: cascadesDirectory)
    }

    private static func searchModelsDirectory() -> String? {
        var candidates: [URL] = []
        var folder = executableFolder()
        candidates.append(folder.deletingLastPathComponent().appendingPathComponent("share/docktrack/models"))
        for _ in 0..<6 {
            candidates.append(folder.appendingPathComponent("models"))
            folder = folder.deletingLastPathComponent()
        }
        candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("models"))
        return candidates.first { fileExists($0.appendingPathComponent(markerFile).path) }?.path
    }

    /// The folder of the running executable (through symlinks): /proc/self/exe, which holds
    /// whatever the program was started as (a bare name found on PATH included).
    static func executableFolder() -> URL {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// A file shipped in `models/`.
    public func model(_ name: String) -> String { "\(modelsDirectory)/\(name)" }
    /// A Haar cascade from opencv-data.
    public func haarCascade(_ name: String) -> String { "\(cascadesDirectory)/haarcascades/\(name)" }
    /// An LBP cascade from opencv-data.
    public func lbpCascade(_ name: String) -> String { "\(cascadesDirectory)/lbpcascades/\(name)" }

    static func fileExists(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// What to tell a user when a shipped model is missing.
    var modelsHint: String { "looked in \(modelsDirectory); set --models or DOCKTRACK_MODELS to DockTrack's models/ folder" }
    /// What to tell a user when a cascade is missing.
    var cascadesHint: String { "install Debian's opencv-data, or set --cascades or DOCKTRACK_CASCADES" }
}
