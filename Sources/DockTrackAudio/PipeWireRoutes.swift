import DockTrackCore
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

package struct PipeWireGraph: Sendable {
    struct Node: Sendable {
        var name: String
        var label: String
        var mediaClass: String
        /// Its properties as text (those `AudioPortType` reads).
        var properties: [String: String] = [:]

        func port(_ kind: AudioPort.Kind, label: String? = nil) -> AudioPort {
            AudioPort(name: name, label: label ?? self.label, kind: kind,
                      type: AudioPortType(pipeWireProperties: properties, isInput: kind == .input))
        }
    }
    private var nodes: [Int: Node] = [:]
    /// Metadata keys by metadata object, values as node names.
    private var metadata: [Int: [String: String]] = [:]

    package init() {}

    /// Takes one array of objects; returns the names of the audio nodes that appeared and went.
    package mutating func apply(_ objects: [[String: Any]]) -> (added: Set<String>, removed: Set<String>) {
        var added = Set<String>(), removed = Set<String>()
        for object in objects {
            guard let id = object["id"] as? Int else { continue }
            // A removed object is its id and a null (a metadata object's info is null all along).
            if object["type"] == nil && (object["info"] is NSNull || object["metadata"] is NSNull) {
                if let gone = nodes.removeValue(forKey: id) { removed.insert(gone.name) }
                metadata[id] = nil
                continue
            }
            let type = object["type"] as? String ?? ""
            if type.hasPrefix("PipeWire:Interface:Node"), let info = object["info"] as? [String: Any] {
                // An update without its properties keeps the ones known.
                guard let props = info["props"] as? [String: Any] else { continue }
                let mediaClass = props["media.class"] as? String ?? ""
                guard mediaClass.hasPrefix("Audio/"), let name = props["node.name"] as? String else { continue }
                if nodes[id] == nil { added.insert(name) }
                let typed = ["node.name", "media.class", "device.api", "device.bus", "device.form-factor", "factory.name"]
                let properties = Dictionary(uniqueKeysWithValues: typed.compactMap { key in (props[key] as? String).map { (key, $0) } })
                nodes[id] = Node(name: name, label: props["node.description"] as? String ?? name, mediaClass: mediaClass, properties: properties)
            } else if type.hasPrefix("PipeWire:Interface:Metadata"), let entries = object["metadata"] as? [[String: Any]] {
                var keys = metadata[id] ?? [:]
                for entry in entries {
                    guard let key = entry["key"] as? String, key.hasPrefix("default.audio.") else { continue }
                    keys[key] = Self.nodeName(entry["value"])
                }
                metadata[id] = keys
            }
        }
        return (added, removed)
    }

    /// Takes one line of `pw-metadata --monitor --name default`:
    /// `update: id:0 key:'default.audio.sink' value:'{"name":"…"}' type:'Spa:String:JSON'` or
    /// `remove: id:0 key:'default.audio.sink'`. Other lines change nothing.
    package mutating func applyMetadataLine(_ line: String) {
        func field(_ name: String) -> String? {
            guard let start = line.range(of: "\(name):'") else { return nil }
            let rest = line[start.upperBound...]
            // A value is JSON and may hold quotes: it runs to the last "' type:".
            let end = name == "value" ? rest.range(of: "' type:", options: .backwards) : rest.range(of: "'")
            return end.map { String(rest[..<$0.lowerBound]) }
        }
        guard let key = field("key"), key.hasPrefix("default.audio.") else { return }
        var keys = metadata[Self.monitoredDefaults] ?? [:]
        keys[key] = line.hasPrefix("update:") ? Self.nodeName(field("value")) : nil
        metadata[Self.monitoredDefaults] = keys
    }

    /// Where ``applyMetadataLine(_:)`` keeps what it reads (no object of pw-dump's has this id).
    private static let monitoredDefaults = -1

    /// A default's value: `{"name":"…"}`, as an object or as JSON text; `nil` when unset.
    private static func nodeName(_ value: Any?) -> String? {
        if let object = value as? [String: Any] { return object["name"] as? String }
        if let text = value as? String, let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] {
            return object["name"] as? String
        }
        return nil
    }

    private func node(named name: String?) -> Node? {
        guard let name else { return nil }
        return nodes.values.first { $0.name == name }
    }

    /// A default: as pw-metadata last said once it has (pw-dump's copy of the metadata, when it
    /// shows one, can lag behind it), else as pw-dump has it.
    private func defaultNode(_ key: String) -> String? {
        if let monitored = metadata[Self.monitoredDefaults] { return monitored[key] }
        return metadata.values.lazy.compactMap { $0[key] }.first
    }

    /// The default input and output, when they are nodes of the graph.
    package var route: AudioSessionRoute {
        var route = AudioSessionRoute()
        if let sink = node(named: defaultNode("default.audio.sink")), sink.mediaClass.hasPrefix("Audio/Sink") {
            route.outputs = [sink.port(.output)]
        }
        if let source = node(named: defaultNode("default.audio.source")) {
            if source.mediaClass.hasPrefix("Audio/Source") {
                route.inputs = [source.port(.input)]
            } else if source.mediaClass.hasPrefix("Audio/Sink") {
                route.inputs = [source.port(.monitor, label: "Monitor of \(source.label)")]
            }
        }
        return route
    }

    /// The capture devices the graph has (sources), the default first.
    package var inputs: [AudioPort] {
        let defaultName = defaultNode("default.audio.source")
        return nodes.values.filter { $0.mediaClass.hasPrefix("Audio/Source") }
            .sorted { ($0.name == defaultName ? 0 : 1, $0.name) < ($1.name == defaultName ? 0 : 1, $1.name) }
            .map { $0.port(.input) }
    }
}

/// Splits a byte stream of JSON arrays (`pw-dump --monitor`'s: one pretty-printed array after
/// another) into whole arrays.
struct JSONArrayStream {
    static let maximumArrayBytes = 16 << 20
    private var pending: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var scanned = 0

    /// The arrays completed by `bytes`.
    mutating func append(_ bytes: ArraySlice<UInt8>) -> [Data] {
        pending += bytes
        var arrays: [Data] = []
        var start = 0
        var i = scanned
        while i < pending.count {
            let byte = pending[i]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") {
                if depth == 0 { start = i }
                depth += 1
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                depth -= 1
                if depth == 0 { arrays.append(Data(pending[start...i])); start = i + 1 }
                if depth < 0 { depth = 0; start = i + 1 }  // stray text: skipped
            } else if depth == 0 {
                start = i + 1
            }
            i += 1
        }
        pending.removeFirst(depth == 0 ? pending.count : start)
        scanned = pending.count
        // An array that never ends (a peer gone wrong) is not kept without bound: past 16 MiB
        // (a graph's whole dump is tens of KB) it is dropped and the stream read afresh.
        if pending.count > Self.maximumArrayBytes {
            self = JSONArrayStream()
        }
        return arrays
    }
}

/// Follows the default audio input and output of a running PipeWire (through `pw-dump
/// --monitor`, from Debian's pipewire-bin: no library to link, and the graph as the session
/// manager shows it) and reports each change of route with its reason and the route before.
///
/// Changes that come together (a device going and the session manager choosing another) are
/// one change: the graph is read until it has been quiet for `settle` seconds, or for at most
/// ``settleAtMost`` after the first change: in a full test run a route change was never told in
/// 90 s, the watcher still waiting for quiet (in its 0.2 s poll) when its stacks were taken.
package final class PipeWireRouteWatcher: Sendable {
    /// Seconds after the first change not yet told within which the route is told, quiet or not.
    package static let settleAtMost = 1.0
    private struct State {
        var route = AudioSessionRoute()
        var primed = false
        var ended = false
    }
    private let state = Monitor(State())
    private let processes: [Process]
    /// Reads both tools' output until pw-dump's ends (``stop()`` ends the tools).
    private let watching: OwnedThread

    /// Whether a PipeWire daemon has its socket in `runtimeDirectory` (by default this
    /// environment's: `PIPEWIRE_RUNTIME_DIR`, else `XDG_RUNTIME_DIR`) and pw-dump is installed.
    package static func isAvailable(runtimeDirectory: String? = nil) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        guard let directory = runtimeDirectory ?? environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"] else { return false }
        let socket = directory + "/" + (environment["PIPEWIRE_REMOTE"] ?? "pipewire-0")
        return FileManager.default.fileExists(atPath: socket) && executable != nil
    }

    private static var executable: String? { find("pw-dump") }

    /// A program on the PATH.
    static func find(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts watching the daemon of `runtimeDirectory` (by default this environment's) and
    /// waits (up to 3 s) for the graph's first route. `clock` times the changes; `onChange` is
    /// called on the watcher's thread.
    ///
    /// Two of PipeWire's own tools watch: `pw-dump --monitor` for the nodes, `pw-metadata
    /// --monitor --name default` for the defaults (pw-dump does not always show the metadata the
    /// session manager makes, such as WirePlumber's "default").
    package init(runtimeDirectory: String? = nil, settle: Double = 0.2, clock: @escaping @Sendable () -> Double = MonotonicClock.now,
                onChange: @escaping @Sendable (AudioSessionRouteChange) -> Void) throws(AudioError) {
        guard let dump = Self.executable, let metadata = Self.find("pw-metadata") else {
            throw .deviceUnavailable(name: "pipewire", reason: "pw-dump and pw-metadata are not installed (Debian: pipewire-bin)")
        }
        let nodes = try Self.start(dump, ["--monitor", "--no-colors"], runtimeDirectory: runtimeDirectory)
        let defaults: (Process, Pipe)
        do {
            defaults = try Self.start(metadata, ["--monitor", "--name", "default"], runtimeDirectory: runtimeDirectory)
        } catch {
            nodes.0.terminate()
            throw error
        }
        processes = [nodes.0, defaults.0]
        let state = state
        let (nodesFD, defaultsFD) = (nodes.1.fileHandleForReading.fileDescriptor, defaults.1.fileHandleForReading.fileDescriptor)
        watching = OwnedThread(named: "docktrack routes") {
            Self.watch(nodes: nodesFD, defaults: defaultsFD, settle: settle, clock: clock, state: state, onChange: onChange)
            withExtendedLifetime((nodes.1, defaults.1)) {}
        }
        let primed = state.withLock(waitingFor: { $0.primed || $0.ended }, until: Date(timeIntervalSinceNow: 3)) { state, _ in state.primed }
        guard primed else {
            stop()
            throw .deviceUnavailable(name: "pipewire", reason: "pw-dump showed no graph within 3 s (is the PipeWire daemon running?)")
        }
    }

    /// Starts one of PipeWire's tools with its output on a pipe. Its output to a pipe is
    /// buffered by its C library until a block fills (the changes would wait there): stdbuf
    /// (coreutils) makes it unbuffered.
    static func start(_ tool: String, _ arguments: [String], runtimeDirectory: String?) throws(AudioError) -> (Process, Pipe) {
        let process = Process()
        if let stdbuf = find("stdbuf") {
            process.executableURL = URL(fileURLWithPath: stdbuf)
            process.arguments = ["-o0", tool] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
        }
        if let runtimeDirectory {
            var environment = ProcessInfo.processInfo.environment
            environment["PIPEWIRE_RUNTIME_DIR"] = runtimeDirectory
            process.environment = environment
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .deviceUnavailable(name: "pipewire", reason: "cannot start \(tool): \(error.localizedDescription)")
        }
        return (process, output)
    }

    deinit { stop() }

    /// The route now.
    package var route: AudioSessionRoute { state.withLock { $0.route } }

    /// Ends the watching (pw-dump and pw-metadata are stopped).
    package func stop() {
        for process in processes where process.isRunning { process.terminate() }
        watching.join()
    }

    private static func watch(nodes: Int32, defaults: Int32, settle: Double, clock: @Sendable () -> Double, state: Monitor<State>,
                              onChange: @Sendable (AudioSessionRouteChange) -> Void) {
        var graph = PipeWireGraph()
        var stream = JSONArrayStream()
        var lines = LineFramer()
        var added = Set<String>(), removed = Set<String>()
        var dirty = false
        /// When the first change not yet told came.
        var dirtySince = 0.0
        var heardNodes = false, heardDefaults = false
        let started = clock()
        var open = [nodes, defaults]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(nodes) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = (try? Syscall.poll(&fds, seconds: dirty ? settle : 1)) ?? 0
            if ready == 0 || (dirty && clock() - dirtySince >= settleAtMost) {
                // The first route waits for the nodes, and up to 1 s for the defaults.
                let primed = state.withLock { $0.primed }
                guard heardNodes, dirty || !primed, primed || heardDefaults || clock() - started > 1 else { continue }
                // Quiet for `settle`: the graph's route as it now stands.
                dirty = false
                let route = graph.route
                let previous = state.withLock { state -> AudioSessionRoute? in
                    defer { state.route = route; state.primed = true }
                    return state.primed ? state.route : nil
                }
                if let previous, previous != route {
                    let reason: AudioRouteChange.Reason
                    let before = Set((previous.inputs + previous.outputs).map(\.name)), now = Set((route.inputs + route.outputs).map(\.name))
                    if !before.subtracting(now).isDisjoint(with: removed) {
                        reason = .oldDeviceUnavailable
                    } else if !now.subtracting(before).isDisjoint(with: added) {
                        reason = .newDeviceAvailable
                    } else {
                        reason = .override
                    }
                    onChange(AudioSessionRouteChange(reason: reason, previous: previous, current: route, time: clock()))
                }
                added = []
                removed = []
                continue
            }
            for pfd in fds where pfd.revents != 0 {
                let n = read(pfd.fd, &buffer, buffer.count)
                guard n > 0 else {
                    open.removeAll { $0 == pfd.fd }
                    continue
                }
                if pfd.fd == nodes {
                    for array in stream.append(buffer[0..<n]) {
                        guard let objects = (try? JSONSerialization.jsonObject(with: array)) as? [[String: Any]] else { continue }
                        let (new, gone) = graph.apply(objects)
                        added.formUnion(new)
                        removed.formUnion(gone)
                        heardNodes = true
                        if !dirty { dirtySince = clock() }
                        dirty = true
                    }
                } else {
                    lines.append(buffer[0..<n])
                    while let item = lines.next() {
                        if case .line(let line) = item { graph.applyMetadataLine(line) }
                        heardDefaults = true
                        if !dirty { dirtySince = clock() }
                        dirty = true
                    }
                }
            }
        }
        state.withLock { $0.ended = true }
    }
}
