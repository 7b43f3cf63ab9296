import CDockEngine
import Foundation

/// DockTrack's inference engine: OpenVINO's C API, from the PyPI wheel that
/// `tools/install-openvino.sh` unpacks (`make deps` runs it), loaded when a network is first
/// opened. One engine per process; each ``EngineNetwork`` belongs to one thread at a time.
///
/// Where its library is looked for, in order: the folder in `DOCKTRACK_OPENVINO` (then no other),
/// `lib/docktrack/openvino` under the executable's prefix (what `make install` writes), a
/// `.openvino/libs` folder beside the executable or in one of its parents (a build inside the
/// repository), `./.openvino/libs`.
package final class InferenceEngine: @unchecked Sendable {
    /// The version the shim is built against (`tools/install-openvino.sh` pins it).
    package static let pinnedVersion = "2026.4.1"

    private let handle: OpaquePointer
    /// The folder its library was loaded from.
    package let libraryFolder: String
    /// The engine's own version string.
    package let version: String

    /// Where compiled networks are kept between runs (``cacheFolder(in:)``), `nil` for
    /// nowhere.
    package let cacheFolder: String?

    private init(handle: OpaquePointer, libraryFolder: String, cacheFolder: String?) {
        self.handle = handle
        self.libraryFolder = libraryFolder
        version = String(cString: dengine_engine_version(handle))
        self.cacheFolder = cacheFolder.flatMap { dengine_engine_set_cache_folder(handle, $0) == 0 ? $0 : nil }
    }

    /// The process's engine, loaded on first use (a failed load is not retried).
    package static func shared() throws(DetectorError) -> InferenceEngine {
        try loaded.get()
    }

    private static let loaded: Result<InferenceEngine, DetectorError> = {
        let environment = ProcessInfo.processInfo.environment
        let candidates = libraryFolders(environment: environment)
        guard let folder = candidates.first(where: { ModelStore.fileExists("\($0)/\(libraryName)") }) else {
            return .failure(.engineMissing(reason: "\(libraryName) not found (looked in \(candidates.joined(separator: ", ")))"))
        }
        var status = dengine_status()
        guard let handle = dengine_engine_open(folder, &status) else {
            return .failure(.engineMissing(reason: status.text))
        }
        return .success(InferenceEngine(handle: handle, libraryFolder: folder, cacheFolder: cacheFolder(in: environment)))
    }()

    /// Where compiled networks are kept, so that a run loads them rather than compiling them
    /// again: compiling the default detector's networks (the person network, MTCNN, the
    /// re-identification and hand networks) took about 0.9 s of processor time at each start of
    /// `track`; loaded, 0.1 s (`track samples/vtest.avi --end 1`: 1.85 -> 1.0 s of user time,
    /// 2.0 -> 1.25 s from start to end). The folder in `DOCKTRACK_ENGINE_CACHE` (empty or `off`:
    /// none), else `docktrack/engine-VERSION` in `$XDG_CACHE_HOME` or `~/.cache`, made if need
    /// be (only for its owner); `nil`, no cache, when it cannot be made or written. The engine
    /// keys each network by the model, its input shape, its settings and its own version; a
    /// file there that cannot be read is compiled past. Each network takes 1 to 4 MB; the person
    /// network one per picture size.
    package static func cacheFolder(in environment: [String: String]) -> String? {
        let folder: String
        if let asked = environment["DOCKTRACK_ENGINE_CACHE"] {
            guard !asked.isEmpty, asked != "off" else { return nil }
            folder = asked
        } else {
            let base: String
            if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { base = xdg }
            else if let home = environment["HOME"], home.hasPrefix("/") { base = home + "/.cache" }
            else { return nil }
            folder = "\(base)/docktrack/engine-\(pinnedVersion)"
        }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue,
              access(folder, W_OK | X_OK) == 0 else { return nil }
        return folder
    }

    static var libraryName: String { String(cString: dengine_library_name) }

    /// The folders searched for the engine's library, in order.
    static func libraryFolders(environment: [String: String]) -> [String] {
        // A folder named by the user is the only one: a wrong one is an error, not a fallback.
        if let explicit = environment["DOCKTRACK_OPENVINO"], !explicit.isEmpty { return [explicit] }
        var folders: [String] = []
        var folder = ModelStore.executableFolder()
        folders.append(folder.deletingLastPathComponent().appendingPathComponent("lib/docktrack/openvino").path)
        for _ in 0..<6 {
            folders.append(folder.appendingPathComponent(".openvino/libs").path)
            folder = folder.deletingLastPathComponent()
        }
        folders.append(FileManager.default.currentDirectoryPath + "/.openvino/libs")
        var seen = Set<String>()
        return folders.filter { seen.insert($0).inserted }
    }

    /// What a network is asked to compute in.
    package enum Precision: String, Sendable, Equatable {
        /// 32-bit floats throughout.
        case f32
        /// bfloat16 where the CPU has it (the engine's own default on such CPUs).
        case bf16
        /// Whatever the engine chooses.
        case engineDefault = ""
    }

    /// The model at `path` compiled for the CPU with its single input set to `inputShape`.
    package func network(model path: String, inputShape: [Int], threads: Int, precision: Precision,
                         hint: String) throws(DetectorError) -> EngineNetwork {
        guard ModelStore.fileExists(path) else { throw .modelMissing(path: path, hint: hint) }
        var status = dengine_status()
        let dims = inputShape.map(Int64.init)
        let network = dims.withUnsafeBufferPointer { dims in
            dengine_network_open(handle, path, dims.baseAddress, Int32(dims.count), Int32(max(0, threads)),
                                 precision == .engineDefault ? nil : precision.rawValue, &status)
        }
        guard let network else { throw .modelUnreadable(path: path, reason: status.text) }
        return EngineNetwork(handle: network, engine: self, inputShape: inputShape)
    }
}

/// One compiled network and its inference request, at a fixed input shape. Fill ``input``, call
/// ``run()``, read ``output(_:)``: the buffers are the engine's own, reused run after run.
package final class EngineNetwork {
    private let handle: OpaquePointer
    /// Keeps the engine's core alive as long as the network.
    private let engine: InferenceEngine
    package let inputShape: [Int]
    /// The input buffer, float32 in the shape the network was opened with.
    package let input: UnsafeMutableBufferPointer<Float>

    fileprivate init(handle: OpaquePointer, engine: InferenceEngine, inputShape: [Int]) {
        self.handle = handle
        self.engine = engine
        self.inputShape = inputShape
        var count = 0
        var status = dengine_status()
        let data = dengine_network_input(handle, &count, &status)
        input = UnsafeMutableBufferPointer(start: data, count: data == nil ? 0 : count)
    }

    deinit { dengine_network_destroy(handle) }

    /// The precision the engine computes this network in ("f32", "bf16").
    package var precision: String {
        var text = [CChar](repeating: 0, count: 32)
        dengine_network_precision(handle, &text, text.count)
        return String(cString: text)
    }

    /// Runs the network on ``input``.
    package func run(detector: String) throws(DetectorError) {
        guard input.count > 0 else { throw .failed(detector: detector, reason: "the network has no float32 input") }
        var status = dengine_status()
        if dengine_network_run(handle, &status) != 0 { throw .failed(detector: detector, reason: status.text) }
    }

    /// Runs the network on `input`, read in place, of shape `shape`: for a network opened with an
    /// empty `inputShape` whose model leaves its input size open (MTCNN's networks).
    package func run(on input: UnsafeMutablePointer<Float>, shape: [Int], detector: String) throws(DetectorError) {
        var status = dengine_status()
        let dims = shape.map(Int64.init)
        let code = dims.withUnsafeBufferPointer { dengine_network_run_on(handle, input, $0.baseAddress, Int32($0.count), &status) }
        if code != 0 { throw .failed(detector: detector, reason: status.text) }
    }

    /// Output `index` of the last run: its values (valid until the next run) and its shape.
    package func output(_ index: Int, detector: String) throws(DetectorError) -> (values: UnsafeBufferPointer<Float>, shape: [Int]) {
        var shape = [Int64](repeating: 0, count: 8)
        var rank: Int32 = 0
        var status = dengine_status()
        guard let data = dengine_network_output(handle, Int32(index), &shape, Int32(shape.count), &rank, &status) else {
            throw .failed(detector: detector, reason: status.text)
        }
        let dims = shape.prefix(Int(rank)).map { Int($0) }
        return (UnsafeBufferPointer(start: data, count: dims.reduce(1, *)), dims)
    }
}

extension dengine_status {
    /// The message the shim wrote.
    var text: String {
        withUnsafeBytes(of: message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}
