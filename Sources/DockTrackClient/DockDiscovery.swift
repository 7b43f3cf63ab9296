import DockTrackCore
import DockTrackSystem
import Foundation
import Synchronization
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
            return manager.sessionInUse ? DiscoveredDock(socketPath: socket, accessory: nil) : nil
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(timeout))
            manager.disconnect()
        }
        defer { timer.cancel() }
        return await first.value
    }
}

/// A dock coming or going in a watched folder of dock sockets.
public enum DockFolderChange: Sendable, Equatable {
    /// A socket appeared and its dock answered (or said another client holds it: busy).
    case appeared(DiscoveredDock)
    /// A dock's socket went away (the dock stopped, or was unplugged and its server removed it).
    case disappeared(socketPath: String)
}

/// Watches a folder of dock sockets (inotify) and reports docks as they come and go: first the
/// docks already there, then each new socket once its dock answers a hello, and each socket
/// removed. DockKit's shared accessory manager tells an app of docks as they are connected;
/// ``shared`` watches the default folder, where `docksim --socket` and `docktrack track --serve`
/// sockets can be put for apps to find.
public final class DockFolderWatcher: Sendable {
    public let folder: String
    /// The changes, each reader on a stream of its own (as DockKit's `accessoryStateChanges`):
    /// every `for await` loop sees every dock, and one that starts late starts with the docks
    /// present then, each as `.appeared`.
    public var changes: AsyncStream<DockFolderChange> { broadcast.stream() }
    private let broadcast = Broadcast<DockFolderChange>(buffered: 256)
    private let inotify: Int32
    private let stopped = Mutex(false)
    /// Watches the folder until ``stop()``.
    private let watcher = Mutex<OwnedThread?>(nil)
    /// The docks reported as appeared and not yet gone, in the order they came.
    private let present = Mutex<[(socket: String, dock: DiscoveredDock)]>([])

    /// The folder apps look in by default: `$DOCKTRACK_DOCKS`, else `$XDG_RUNTIME_DIR/docktrack`,
    /// else `/tmp/docktrack-UID`.
    public static var defaultFolder: String {
        let environment = ProcessInfo.processInfo.environment
        if let folder = environment["DOCKTRACK_DOCKS"], !folder.isEmpty { return folder }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/docktrack" }
        return "/tmp/docktrack-\(getuid())"
    }

    /// The watcher of ``defaultFolder`` (made, owner-only, when missing); `nil` when it cannot be
    /// watched.
    public static let shared: DockFolderWatcher? = {
        let folder = defaultFolder
        _ = mkdir(folder, 0o700)
        return try? DockFolderWatcher(folder: folder)
    }()

    /// Watches `folder` (which must exist); a socket is asked who it is for up to
    /// `helloTimeout` seconds (a dock that has just made its socket may not listen yet: asked
    /// again meanwhile).
    public init(folder: String, helloTimeout: Double = 2) throws(DockError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .invalidRequest("no folder at \(folder)")
        }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw .invalidRequest("cannot watch \(folder): \(String(cString: strerror(errno)))") }
        guard inotify_add_watch(fd, folder, UInt32(IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM)) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .invalidRequest("cannot watch \(folder): \(reason)")
        }
        self.folder = folder
        inotify = fd
        let existing = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        let timeout = helloTimeout.isFinite ? max(0.1, helloTimeout) : 2
        // The thread holds the watcher until stop().
        watcher.withLock { $0 = OwnedThread(named: "docktrack docks") { [self] in watch(announcing: existing, timeout: timeout) } }
    }

    deinit {
        stop()
        close(inotify)
    }

    /// Stops watching and waits for the watching thread to end; ``changes`` ends.
    public func stop() {
        stopped.withLock { $0 = true }
        watcher.withLock { $0?.join() }
    }

    private func watch(announcing existing: [String], timeout: Double) {
        let introductions = Task { [self] in
            for name in existing { await announce(name, timeout: timeout) }
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var asking: [Task<Void, Never>] = [introductions]
        while !stopped.withLock({ $0 }) {
            var ready = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            guard (try? Syscall.poll(&ready, seconds: 0.2)) ?? 0 > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (mask, length, name) = buffer.withUnsafeBytes { bytes -> (UInt32, Int, String) in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = bytes[start..<min(count, start + Int(event.len))].prefix { $0 != 0 }
                    return (event.mask, Int(event.len), String(decoding: nameBytes, as: UTF8.self))
                }
                offset += MemoryLayout<inotify_event>.size + length
                guard !name.isEmpty else { continue }
                if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                    asking.append(Task { [self] in await announce(name, timeout: timeout) })
                } else if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                    // Only a dock reported: other files come and go (an editor's, a download's).
                    let socket = path(of: name)
                    present.withLock { present in
                        guard let index = present.firstIndex(where: { $0.socket == socket }) else { return }
                        present.remove(at: index)
                        broadcast.yield(.disappeared(socketPath: socket), current: present.map { .appeared($0.dock) })
                    }
                }
            }
        }
        for task in asking { task.cancel() }
        broadcast.finish()
    }

    private func path(of name: String) -> String { (folder as NSString).appendingPathComponent(name) }

    /// Reports the dock behind `name` once it answers, asking again until `timeout`.
    private func announce(_ name: String, timeout: Double) async {
        let socket = path(of: name)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline, !Task.isCancelled {
            if let found = try? await DockAccessoryManager.discover(at: socket, timeout: max(0.1, deadline.timeIntervalSinceNow)),
               let dock = found.first {
                present.withLock { present in
                    present.removeAll { $0.socket == socket }
                    present.append((socket, dock))
                    broadcast.yield(.appeared(dock), current: present.map { .appeared($0.dock) })
                }
                return
            }
            // Not a socket yet, not listening yet, or gone: again shortly.
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}
