import DockTrackMedia
import DockTrackRuntime
import DockTrackSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Draws and encodes the page's pictures on a thread of its own that runs at a lower priority
/// than the rest of the process (nice +10): when the frame loop needs the core, it gets it first,
/// and the pictures wait. A few milliseconds each (drawing, JPEG), 30 a second per page.
final class PictureEncoder: Sendable {
    private struct Job: @unchecked Sendable {
        var image: Image
        var annotation: FrameAnnotation?
        var quality: Int
        var done: @Sendable (Result<(drawn: Image, jpeg: [UInt8]), any Error>) -> Void
    }
    private struct Queue {
        var jobs: [Job] = []
        var stopped = false
    }
    private let queue = Monitor(Queue())
    /// How much lower the thread runs (Linux's nice applies to a thread by its id).
    static let niceness: Int32 = 10

    private let encoding: OwnedThread

    init() {
        encoding = OwnedThread(named: "docktrack pictures") { [queue] in
            #if os(Linux)
            // 0: on Linux the calling thread (a nice value is a thread's there), not the process.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
            #endif
            while true {
                let job: Job? = queue.withLock(waitingFor: { !$0.jobs.isEmpty || $0.stopped }) { queue, _ in
                    queue.stopped ? nil : queue.jobs.removeFirst()
                }
                guard let job else { break }
                job.done(Result {
                    var drawn = job.image
                    if let annotation = job.annotation {
                        let canvas = try Canvas(copying: job.image)
                        annotation.draw(on: canvas)
                        drawn = canvas.image
                    }
                    return (drawn, try drawn.jpeg(quality: job.quality))
                })
            }
            // Whatever was still asked for is answered, not left waiting.
            for job in queue.withLock({ queue in defer { queue.jobs = [] }; return queue.jobs }) {
                job.done(.failure(CancellationError()))
            }
        }
    }

    /// `image` with `annotation` drawn on it (a copy; nil: drawn already), and its JPEG.
    func encode(_ image: Image, annotation: FrameAnnotation?, quality: Int) async throws -> (drawn: Image, jpeg: [UInt8]) {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(image: image, annotation: annotation, quality: quality) { continuation.resume(with: $0) }
            let taken = queue.withLock { queue in
                guard !queue.stopped else { return false }
                queue.jobs.append(job)
                return true
            }
            if !taken { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Ends the thread and waits for it; jobs still waiting fail.
    func stop() {
        queue.withLock { $0.stopped = true }
        encoding.join()
    }

    deinit { stop() }
}
