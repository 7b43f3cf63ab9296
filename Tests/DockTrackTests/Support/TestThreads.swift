import DockTrackMedia
import Foundation
import Testing

/// Where the tests' bodies run: threads of their own, not Swift's cooperative pool.
///
/// Swift Testing runs each test as a task on the cooperative pool, which has as many threads as
/// the machine has cores (two here). Most of these tests block while they wait: for a child
/// process (`docktrack`, `docksim`, a camera emulator), a socket, a browser, a real-time run.
/// Two such waits took the whole pool, and every other test, ready or not, waited behind them:
/// the run was a long queue with the processor half idle. Each suite of synchronous tests takes
/// ``onTestThreads``, which runs its tests' bodies on ``TestThreads/pool``: a fixed set of threads
/// (`DOCKTRACK_TEST_THREADS`, 4 by default) on which a blocked test holds only its own. Suites
/// of `async` tests stay on the cooperative pool, which the blocking ones then leave free: a test
/// that awaits a dock's answer and times it is resumed at once, not when a thread comes free.
/// A synchronous test that blocks, in a suite of async tests, takes `@Test(.onTestThreads)`
/// itself: on the cooperative pool RequestIDTests' two sample runs (46 s each of waiting for
/// child processes) held both its threads under the full suite, and every async test stalled
/// meanwhile (a dock's socket not announced in 30 s, a 4 s move timed at 4.4 s). An async test
/// waits for a child process without blocking (``DocksimProcess/started(_:)``).
enum TestThreads {
    /// How many test bodies run at once.
    static let count: Int = {
        let asked = ProcessInfo.processInfo.environment["DOCKTRACK_TEST_THREADS"].flatMap(Int.init) ?? 4
        return min(max(asked, 1), 32)
    }()

    static let pool: ThreadPoolExecutor = {
        // As docktrack does first thing: OpenCV's big freed blocks kept for the next frame, not
        // returned to the system and faulted in and zeroed again.
        OpenCVRuntime.keepFreedBlocks()
        return ThreadPoolExecutor(threads: count, name: "docktrack test")
    }()
}

/// A task executor on a fixed set of threads: each takes the next job and runs it to its next
/// suspension. A job that blocks blocks its thread alone. Jobs enqueued through ``first`` are
/// taken before the others (see ``OnTestThreads``).
final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var firstJobs: [UnownedJob] = []
    private var threads: [Thread] = []
    /// The same threads, its jobs taken first.
    private(set) var first: FirstLane!

    /// The pool's lane whose jobs are taken before the others'.
    final class FirstLane: TaskExecutor, @unchecked Sendable {
        unowned let pool: ThreadPoolExecutor
        init(pool: ThreadPoolExecutor) { self.pool = pool }
        func enqueue(_ job: consuming ExecutorJob) { pool.enqueue(UnownedJob(job), first: true) }
    }

    init(threads count: Int, name: String) {
        first = FirstLane(pool: self)
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.serve() }
            thread.name = "\(name) \(index + 1)"
            thread.stackSize = 8 << 20
            threads.append(thread)
        }
        // Started once all exist; they serve for the life of the test process.
        for thread in threads { thread.start() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        enqueue(UnownedJob(job), first: false)
    }

    private func enqueue(_ job: UnownedJob, first: Bool) {
        condition.lock()
        if first { firstJobs.append(job) } else { jobs.append(job) }
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty && firstJobs.isEmpty { condition.wait() }
            let isFirst = !firstJobs.isEmpty
            let job = isFirst ? firstJobs.removeFirst() : jobs.removeFirst()
            condition.unlock()
            // Run where it was enqueued, so that what it awaits comes back to the same lane.
            job.runSynchronously(on: isFirst ? first.asUnownedTaskExecutor() : asUnownedTaskExecutor())
        }
    }
}

/// Runs a suite's tests on ``TestThreads/pool`` (see ``TestThreads``).
struct OnTestThreads: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }
    /// Whether its tests' jobs go before the others' (``serializedOnTestThreads``).
    var first = false

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // The suite's scope and each test's: the body runs where the innermost asks, here the same
        // pool. A serialized suite's tests go first: each of them is queued only when the one
        // before it ends, and behind every parallel test queued meanwhile such a chain ran on
        // alone at the end of the run (NetworkCameraTests' last 133 s, on a half-idle machine).
        let executor: any TaskExecutor = first ? TestThreads.pool.first : TestThreads.pool
        try await withTaskExecutorPreference(executor) {
            guard test.isSuite == false, let times = TestTimes.file, TestTimes.children == nil else { return try await function() }
            // Timed from when its body runs on the pool, not from when it was queued for it.
            let began = Date(), cpu = TestTimes.threadCPU()
            // A synchronous body stays on its pool thread: that thread's processor time is the
            // test's own work (its child processes' not included).
            let children = ChildProcessorTime()
            defer { times.record(test.id.description, began: began, ended: Date(), cpu: TestTimes.threadCPU() - cpu, children: children.seconds) }
            try await TestTimes.$children.withValue(children) { try await function() }
        }
    }
}

extension Trait where Self == OnTestThreads {
    /// The suite's tests run on threads of their own (``TestThreads``).
    static var onTestThreads: OnTestThreads { OnTestThreads() }

    /// For a `.serialized` suite: its tests run on ``TestThreads/pool`` before the parallel
    /// tests waiting for it (each of them is queued only when the one before it ends).
    static var serializedOnTestThreads: OnTestThreads { OnTestThreads(first: true) }

    /// For a suite of tests that mostly wait on the wall clock (a server's 30 s idle limit):
    /// its tests go before the others, so that their waits pass beside the others' work rather
    /// than at the end of the run (PageEdgeTests, queued last, ran alone for its last 30 s).
    static var earlyOnTestThreads: OnTestThreads { OnTestThreads(first: true) }
}

/// With `DOCKTRACK_TEST_TIMES=FILE`, each test on the pool writes a line to FILE: how long it
/// ran, its thread's processor seconds, when its body began and ended (seconds since 1970), its
/// name, and the processor seconds of the child processes it reaped with ``ToolRun/wait(for:)``
/// (not those run by Foundation's Process). The durations Swift Testing prints count the time a
/// test waited for a thread of the pool. Tests of async suites, on the cooperative pool, are not in it.
final class TestTimes: Sendable {
    static let file: TestTimes? = ProcessInfo.processInfo.environment["DOCKTRACK_TEST_TIMES"].flatMap(TestTimes.init(path:))
    private let handle: FileHandle
    private let lock = NSLock()

    init?(path: String) {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { return nil }
        self.handle = handle
    }

    static func threadCPU() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The processor time of the current test's child processes, as ``ToolRun/wait(for:)`` reaps them.
    @TaskLocal static var children: ChildProcessorTime?

    func record(_ name: String, began: Date, ended: Date, cpu: Double, children: Double) {
        let line = String(format: "%.3f\t%.3f\t%.3f\t%.3f\t%@\t%.3f\n", ended.timeIntervalSince(began), cpu, began.timeIntervalSince1970,
                          ended.timeIntervalSince1970, name, children)
        lock.lock()
        defer { lock.unlock() }
        handle.write(Data(line.utf8))
    }
}

/// Processor seconds of child processes reaped so far (``TestTimes/children``).
final class ChildProcessorTime: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var total = 0.0
    var seconds: Double { lock.withLock { total } }
    func add(_ usage: rusage) {
        let seconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        lock.withLock { total += seconds }
    }
}
