import DockTrack
import Foundation

/// Paths to the repository's samples, models and built tool, found from this file's location.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func sample(_ name: String) -> String { root.appendingPathComponent("samples/\(name)").path }

    static let models = ModelStore.locate(models: root.appendingPathComponent("models").path)

    /// The `docktrack` executable built beside the test bundle (or named by DOCKTRACK_BIN).
    static var tool: String {
        if let path = ProcessInfo.processInfo.environment["DOCKTRACK_BIN"] { return path }
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for folder in [besideTests, besideTests.deletingLastPathComponent(), root.appendingPathComponent(".build/debug")] {
            let candidate = folder.appendingPathComponent("docktrack").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/docktrack").path
    }

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("docktrack-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The first `bytes` bytes of a sample, written to a temporary file: a truncated download.
    static func truncatedCopy(of name: String, bytes: Int, in folder: URL) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: sample(name)))
        let url = folder.appendingPathComponent("truncated-\(name)")
        try data.prefix(bytes).write(to: url)
        return url.path
    }

    /// Every frame of a source, for tests.
    static func frames(of path: String) throws -> [Frame] {
        var source = try MediaFile.open(path)
        var frames: [Frame] = []
        while let frame = try source.nextFrame() { frames.append(frame) }
        return frames
    }
}

/// The result of running the built tool.
struct ToolRun {
    var status: Int32
    var stdout: String
    var stderr: String

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Runs `docktrack` with `arguments` and waits for it.
    static func docktrack(_ arguments: [String], environment: [String: String?] = [:]) throws -> ToolRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Fixtures.tool)
        process.arguments = arguments
        if !environment.isEmpty {
            var merged = ProcessInfo.processInfo.environment
            for (key, value) in environment { merged[key] = value }
            process.environment = merged
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the process runs so that neither fills up and blocks it.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                       stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A point as a person reads it off a picture: pixels from the top-left corner.
struct PixelPoint {
    var x: Double
    var y: Double

    /// Whether the observation's box, drawn on an image of `size`, contains this point.
    func isInside(_ rect: UnitRect, of size: ImageSize) -> Bool {
        let p = rect.pixelRect(in: size)
        return x >= p.x && x <= p.x + p.width && y >= p.y && y <= p.y + p.height
    }
}
