import DockTrack
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Paths to the repository's samples, models and built tool, found from this file's location.
enum Fixtures {
    /// The repository: the nearest folder above this file that holds Package.swift.
    static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            folder.deleteLastPathComponent()
        }
        return folder
    }()

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

    /// The folder that holds every temporary file and socket of this test process
    /// (`docktrack-tests-PID` in the system's temporary folder), removed when the process exits:
    /// a run of the suite used to leave about 130 folders of up to 26 MB each and its sockets.
    static let temporaryRoot: URL = {
        let url = temporaryRoot(of: getpid())
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Fixtures.temporaryRoot(of: getpid())) }
        return url
    }()

    private static func temporaryRoot(of process: pid_t) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("docktrack-tests-\(process)")
    }

    /// A fresh temporary folder (inside ``temporaryRoot``).
    static func temporaryFolder() throws -> URL {
        let url = temporaryRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A fresh path for a Unix socket named `name`-something.sock (inside ``temporaryRoot``:
    /// short enough for a socket's 108 bytes).
    static func socketPath(_ name: String) -> String {
        temporaryRoot.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).sock").path
    }

    /// Custom-tracking input (`track --observations`): `count` lines of the same `observations`
    /// in a 640x480 frame, `rate` per second, written to a file in a fresh temporary folder.
    static func observationsFile(_ observations: [Observation], count: Int, rate: Double = 20) throws -> URL {
        let lines = (0..<count).map { i in
            DetectionRecord(frame: i, time: Double(i) / rate, size: ImageSize(width: 640, height: 480), observations: observations).jsonLine
        }
        let url = try temporaryFolder().appendingPathComponent("observations.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
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
        try run(Fixtures.tool, arguments, environment: environment)
    }

    /// Runs `executable` with `arguments` and waits for it.
    ///
    /// Spawned with posix_spawn and reaped with waitpid rather than with Foundation's Process:
    /// the child gets default signal handling and an empty signal mask (the test runner blocks
    /// SIGTERM, which children would otherwise inherit), and waiting does not depend on
    /// Foundation's SIGCHLD monitoring, which was seen to miss the exit of a script whose own
    /// children daemonize (tools/emulated-camera.sh start).
    /// With `input`, the child reads it on its stdin (then end of file), else /dev/null.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String?] = [:], input: Data? = nil) throws -> ToolRun {
        var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0], inPipe: [Int32] = [-1, -1]
        // Close-on-exec: another test's child started meanwhile must not hold a write end, or
        // this run's output would not end until that child does (the spawned tool gets them as 0, 1, 2).
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0, input == nil || pipe(&inPipe) == 0 else { throw POSIXError(.EMFILE) }
        let pipes = outPipe + errPipe + (input == nil ? [] : inPipe)
        for fd in pipes { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let spawned = spawn(executable, arguments, environment: environment, stdin: input == nil ? nil : inPipe[0], stdout: outPipe[1],
                            stderr: errPipe[1], closing: pipes)
        close(outPipe[1])
        close(errPipe[1])
        if input != nil { close(inPipe[0]) }
        let pid: pid_t
        do { pid = try spawned.get() } catch {
            for fd in [outPipe[0], errPipe[0]] + (input == nil ? [] : [inPipe[1]]) { close(fd) }
            throw error
        }
        // Read both pipes (and write the input) while the child runs so that none fills up and blocks it.
        nonisolated(unsafe) var errData = Data()
        let errReader = FileHandle(fileDescriptor: errPipe[0], closeOnDealloc: true)
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = errReader.readDataToEndOfFile()
            group.leave()
        }
        if let input {
            let writer = FileHandle(fileDescriptor: inPipe[1], closeOnDealloc: true)
            group.enter()
            DispatchQueue.global().async {
                try? writer.write(contentsOf: input)
                try? writer.close()
                group.leave()
            }
        }
        let outData = FileHandle(fileDescriptor: outPipe[0], closeOnDealloc: true).readDataToEndOfFile()
        group.wait()
        return ToolRun(status: wait(for: pid), stdout: String(decoding: outData, as: UTF8.self),
                       stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Starts `executable` with stdin from `stdin` (else /dev/null) and stdout/stderr on the given
    /// descriptors (closing `closing` in the child), default signal handling and an empty signal mask.
    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                      stdin: Int32? = nil, stdout: Int32, stderr: Int32, closing: [Int32] = []) -> Result<pid_t, POSIXError> {
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        for fd in closing { posix_spawn_file_actions_addclose(&actions, fd) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        return result == 0 ? .success(pid) : .failure(POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT))
    }

    /// Waits for the child `pid`; its exit status, or 128 + the signal that killed it.
    static func wait(for pid: pid_t) -> Int32 {
        let ended = waitForEnd(of: pid)
        return ended.signal.map { 128 + $0 } ?? ended.status
    }

    /// Waits for the child `pid`: its exit status, or the signal that killed it.
    static func waitForEnd(of pid: pid_t) -> (status: Int32, signal: Int32?) {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) == -1 && errno == EINTR {}
        TestTimes.children?.add(usage)
        return status & 0x7F == 0 ? ((status >> 8) & 0xFF, nil) : (0, status & 0x7F)
    }
}

/// docksim serving a fresh Unix socket in another process, for as long as the value lives.
final class DocksimProcess {
    let socket: String
    let pid: pid_t
    /// Reaped by ``stop(signal:)``.
    private var stopped = false

    /// Starts docksim with `arguments` after `--socket PATH` and waits (up to 20 s) for the socket.
    /// It serves for 30 minutes at most: under a sanitizer a test may wait over 5 minutes for a thread.
    convenience init(_ arguments: [String] = []) throws {
        try self.init(spawning: arguments)
        let socket = socket
        waitWhile(atMost: .seconds(20), every: .milliseconds(20)) { !FileManager.default.fileExists(atPath: socket) }
    }

    /// Starts docksim serving `socket` (a fresh path when nil) without waiting for the socket.
    init(spawning arguments: [String], socket: String? = nil) throws {
        let socket = socket ?? Fixtures.socketPath("docksim")
        self.socket = socket
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        pid = try ToolRun.spawn(DockSimTests.docksim, ["--socket", socket, "--duration", "1800"] + arguments, stdout: devNull, stderr: devNull).get()
    }

    /// Sends `signal` and reaps it (its exit status; once: later calls return -1). Reaped with
    /// waitpid, not Foundation's Process: a full run hung for good in `waitUntilExit` after
    /// SIGKILL, docksim a zombie nobody reaped (Foundation's SIGCHLD monitoring missed its exit).
    @discardableResult
    func stop(signal: Int32 = SIGKILL) -> Int32 {
        guard !stopped else { return -1 }
        stopped = true
        kill(pid, signal)
        return ToolRun.wait(for: pid)
    }

    /// ``init(_:)`` for an async test: the wait for the socket gives its thread back. A thread of
    /// Swift's cooperative pool (two here) held by that wait under the full suite stalled every
    /// other async test for seconds (a 4 s move measured 4.4 s and more).
    static func started(_ arguments: [String] = []) async throws -> DocksimProcess {
        let process = try DocksimProcess(spawning: arguments)
        let socket = process.socket
        await awaitWhile(atMost: .seconds(20), every: .milliseconds(20)) { !FileManager.default.fileExists(atPath: socket) }
        return process
    }

    deinit {
        stop(signal: SIGTERM)
    }
}

/// `docktrack track` in another process (in front of docksim, say), serving its control
/// socket; its stderr kept in a file. Stopped with SIGTERM when the value goes, unless it was
/// waited for.
final class TrackProcess {
    let pid: pid_t
    /// The `--serve` socket.
    let socket = Fixtures.socketPath("track")
    let log: String
    private var ended = false

    /// `track` with `arguments` and `--serve` on ``socket``.
    init(_ arguments: [String], environment: [String: String?] = [:]) throws {
        log = try Fixtures.temporaryFolder().appendingPathComponent("track.err").path
        let errFD = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o644), nullFD = open("/dev/null", O_WRONLY)
        defer {
            close(errFD)
            close(nullFD)
        }
        pid = try ToolRun.spawn(Fixtures.tool, ["track"] + arguments + ["--serve", socket], environment: environment,
                                stdout: nullFD, stderr: errFD).get()
    }

    /// What the run said on stderr so far.
    var stderr: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Where each of the run's threads is, for a failure's message when the run seems stuck:
    /// gdb's backtraces where gdb is installed, else a line saying it is not.
    var threadStacks: String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "(no gdb here to show the run's threads)" }
        let run = try? ToolRun.run("/usr/bin/gdb", ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt 12"])
        return run?.lines.filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }.joined(separator: "\n") ?? "(gdb did not run)"
    }

    /// Waits for the run to end by itself; its status.
    @discardableResult
    func wait() -> Int32 {
        ended = true
        return ToolRun.wait(for: pid)
    }

    deinit {
        if !ended {
            kill(pid, SIGTERM)
            _ = ToolRun.wait(for: pid)
        }
    }
}
