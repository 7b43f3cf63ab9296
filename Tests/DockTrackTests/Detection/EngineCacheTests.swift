import DockTrack
import DockTrackDetection
import Foundation
import Testing

/// The inference engine's cache of compiled networks (``InferenceEngine/cacheFolder(in:)``):
/// a run fills it, the next loads from it and tracks the same, a cache spoiled or out of reach
/// changes nothing but the time.
@Suite(.onTestThreads) struct EngineCacheTests {
    /// The blob files in `folder`, with their sizes.
    static func blobs(in folder: URL) -> [String: Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var sizes: [String: Int] = [:]
        for name in names where name.hasSuffix(".blob") {
            let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            sizes[name] = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        }
        return sizes
    }

    @Test func aRunFillsTheCacheTheNextLoadsFromItAndASpoiledCacheIsCompiledPast() throws {
        let folder = try Fixtures.temporaryFolder().appendingPathComponent("engine cache")
        let arguments = ["track", Fixtures.sample("vtest.avi"), "--end", "12"]
        let first = try ToolRun.docktrack(arguments, environment: ["DOCKTRACK_ENGINE_CACHE": folder.path])
        #expect(first.status == 0, "\(first.stderr)")
        let filled = Self.blobs(in: folder)
        // The person network, MTCNN's, re-identification, hands, landmarks: several networks.
        #expect(filled.count >= 3 && filled.values.allSatisfy { $0 > 10_000 }, "\(filled)")
        #expect(first.lines.count > 12 && first.lines.last?.contains("\"velocity\":{\"x\":0.0,\"y\":0.0,\"z\":0.0}") == true, "\(first.stdout)")

        let second = try ToolRun.docktrack(arguments, environment: ["DOCKTRACK_ENGINE_CACHE": folder.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout == first.stdout, "the networks loaded from the cache track as the compiled ones")
        #expect(Self.blobs(in: folder) == filled, "nothing compiled again")

        // Every blob cut short (a run stopped while writing, a full disk): compiled again and
        // written again, the same subjects.
        for name in filled.keys {
            let path = folder.appendingPathComponent(name).path
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: 100)
            try handle.close()
        }
        let spoiled = try ToolRun.docktrack(arguments, environment: ["DOCKTRACK_ENGINE_CACHE": folder.path])
        #expect(spoiled.status == 0, "\(spoiled.stderr)")
        #expect(spoiled.stdout == first.stdout)
        #expect(Self.blobs(in: folder).values.filter { $0 > 10_000 }.count == filled.count, "\(Self.blobs(in: folder))")
    }

    @Test func aCacheOutOfReachOrTurnedOffIsNoCache() throws {
        let root = try Fixtures.temporaryFolder()
        let file = root.appendingPathComponent("a file")
        try Data("not a folder".utf8).write(to: file)
        // A run with a cache that cannot be made (the folders below are judged the same way).
        let run = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "3"], environment: ["DOCKTRACK_ENGINE_CACHE": file.path])
        #expect(run.status == 0 && run.lines.count > 3, "\(run.stderr)")
        #expect(try Data(contentsOf: file) == Data("not a folder".utf8))
        #expect(InferenceEngine.cacheFolder(in: ["DOCKTRACK_ENGINE_CACHE": "off", "HOME": root.path]) == nil)
        #expect(InferenceEngine.cacheFolder(in: ["DOCKTRACK_ENGINE_CACHE": "", "HOME": root.path]) == nil)
        #expect(InferenceEngine.cacheFolder(in: ["DOCKTRACK_ENGINE_CACHE": file.path]) == nil)
        #expect(InferenceEngine.cacheFolder(in: ["DOCKTRACK_ENGINE_CACHE": "/proc/no such folder"]) == nil)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent(".cache").path), "off makes no folder")
        // Without the variable: XDG's cache folder, else the home's, made for its owner alone.
        let home = InferenceEngine.cacheFolder(in: ["HOME": root.path])
        #expect(home == root.path + "/.cache/docktrack/engine-\(InferenceEngine.pinnedVersion)")
        let xdg = InferenceEngine.cacheFolder(in: ["HOME": root.path, "XDG_CACHE_HOME": root.path + "/xdg"])
        #expect(xdg == root.path + "/xdg/docktrack/engine-\(InferenceEngine.pinnedVersion)")
        let mode = try FileManager.default.attributesOfItem(atPath: try #require(xdg))[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o700)
        #expect(InferenceEngine.cacheFolder(in: ["HOME": "relative/home"]) == nil, "a relative home is no place")
    }
}
