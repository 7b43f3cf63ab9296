import DockTrackCore
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking

/// The overview camera during `track --overview`: its frames read and its people tracked on a
/// thread of its own beside the dock camera's loop; the loop takes the newest people
/// (``latest``) for each of its frames. A live overview runs as fast as it goes; a recorded one
/// is kept in step with the run (``advance(to:)``: its frames are read up to the run's time, so
/// that two recordings of one moment are seen together). A failure of the overview (a camera
/// gone, a file at its end) ends the watch, not the run: the dock goes on with its own camera
/// alone, and ``ended`` says why.
package final class OverviewWatch: Sendable {
    /// What the overview saw last.
    package struct Sight: Sendable {
        package var subjects: [TrackedSubject]
        /// The overview's picture, for a page or an annotated video.
        package var image: Image
        /// When it was captured, on the overview source's clock.
        package var time: Double
        package var index: Int
    }

    private struct Shared {
        var latest: Sight?
        var ended: String?
        /// The run's time, for a recorded overview: frames up to it are read.
        var runTime = -Double.infinity
        var stopped = false
        var tracked = 0
        var passedOver = 0
    }

    private let shared = Monitor(Shared())
    /// Seconds a recorded overview's frame may be behind the run and still be tracked.
    static let behind = 0.15
    private let reading: OwnedThread
    /// The source when it is live: stopped first so that a read waiting for a frame returns.
    private nonisolated(unsafe) let live: (any LiveFrameSource)?

    /// Starts reading `source` and tracking its people with `pipeline`; both become the
    /// watch's thread's until ``stop()`` returns.
    package init(source: any FrameSource, pipeline: TrackingPipeline) {
        live = source as? any LiveFrameSource
        let paced = live == nil
        let shared = shared
        reading = OwnedThread(named: "docktrack overview", handingOver: (source: source, pipeline: pipeline)) { parts in
            var source = parts.source
            while !shared.withLock({ $0.stopped }) {
                do {
                    guard let frame = try source.nextFrame() else {
                        shared.withLock { $0.ended = "the overview ended (its last frame)" }
                        return
                    }
                    // A recording waits for the run to reach the frame's time, and passes over
                    // the frames the run has left behind (it is faster than the overview's detector).
                    if paced {
                        let (going, behind) = shared.withLock(waitingFor: { $0.stopped || $0.runTime >= frame.time }) { state, _ in
                            (!state.stopped, state.runTime > frame.time + Self.behind)
                        }
                        guard going else { return }
                        if behind {
                            shared.withLock { $0.passedOver += 1 }
                            continue
                        }
                    }
                    let subjects = try parts.pipeline.process(frame)
                    let sight = Sight(subjects: subjects, image: frame.image, time: frame.time, index: frame.index)
                    shared.withLock {
                        $0.latest = sight
                        $0.tracked += 1
                    }
                } catch {
                    shared.withLock { $0.ended = "the overview stopped: \(error)" }
                    return
                }
            }
        }
    }

    deinit { stop() }

    /// Tells a recorded overview the run's time (the dock camera's frame time): its frames up
    /// to then are read. A live one runs by itself.
    package func advance(to time: Double) {
        shared.withLock { $0.runTime = max($0.runTime, time) }
    }

    /// What the overview saw last; `nil` before its first frame.
    package var latest: Sight? { shared.withLock { $0.latest } }

    /// Frames of the overview tracked, and (a recording) passed over to keep in step with the run.
    package var frames: (tracked: Int, passedOver: Int) { shared.withLock { ($0.tracked, $0.passedOver) } }

    /// Why the watch ended, once it has (the run goes on without the overview).
    package var ended: String? { shared.withLock { $0.ended } }

    /// Ends the thread (after the frame in hand) and waits for it; a live source is stopped
    /// first so that a read waiting for a frame returns. Again is harmless.
    package func stop() {
        let already = shared.withLock { state in
            defer { state.stopped = true }
            return state.stopped
        }
        if !already { live?.stop() }
        reading.join()
    }
}
