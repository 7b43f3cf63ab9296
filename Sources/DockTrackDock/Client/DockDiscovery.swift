import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A dock found by ``DockAccessoryManager/discover(at:timeout:)``: where it serves, and who it
/// is; `nil` for a dock whose session another client holds (it refused the hello).
public struct DiscoveredDock: Sendable, Equatable {
    public var socketPath: String
    public var accessory: DockAccessory?
    public var isBusy: Bool { accessory == nil }
}

extension DockAccessoryManager {
    /// The docks at `path`: a dock's socket, or a folder of them (every socket in it, in name
    /// order). Each is asked who it is (a hello, then hanging up, which leaves its session
    /// free); a socket nobody answers within `timeout` seconds, or that does not speak the
    /// dock protocol, is left out. Throws `notConnected` for a path that is neither.
    public static func discover(at path: String, timeout: Double = 2) async throws(DockError) -> [DiscoveredDock] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw .notConnected }
        let candidates: [String]
        if isFolder.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            candidates = names.sorted().map { (path as NSString).appendingPathComponent($0) }.filter(isSocket)
        } else {
            guard isSocket(path) else { throw .notConnected }
            candidates = [path]
        }
        var found: [DiscoveredDock] = []
        for candidate in candidates {
            if let dock = await ask(candidate, timeout: timeout) { found.append(dock) }
        }
        return found
    }

    private static func isSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    /// The dock at `socket` as its hello says, busy when it refuses one; nil when it does not answer.
    private static func ask(_ socket: String, timeout: Double) async -> DiscoveredDock? {
        guard let manager = try? DockAccessoryManager(socketPath: socket) else { return nil }
        defer { manager.disconnect() }
        let first = Task { () -> DiscoveredDock? in
            for await change in manager.stateChanges {
                if case .docked(let accessory) = change { return DiscoveredDock(socketPath: socket, accessory: accessory) }
                if case .disconnected = change { break }
            }
            // No hello: a dock whose session another client holds said so before hanging up.
            for await refusal in manager.errors where refusal.message.contains("already open") {
                return DiscoveredDock(socketPath: socket, accessory: nil)
            }
            return nil
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(timeout))
            manager.disconnect()
        }
        defer { timer.cancel() }
        return await first.value
    }
}
