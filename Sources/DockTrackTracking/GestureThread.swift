import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import DockTrackSystem
import Foundation
import Synchronization

/// A ``GestureWatch`` on a thread of its own, for live input: the frame thread hands each frame
/// and its subjects over and goes on (a palm search, about 7.5 ms, never holds up a frame's
/// command); if the watch is still busy, the newest frame replaces the one waiting. Gestures
/// come back with ``takeGestures()``, a frame or so after the frame they were seen on (their
/// time is that frame's).
package final class GestureThread: Sendable {
    /// A frame for the watch: its picture, its time, its subjects.
    private struct Look: Sendable {
        var image: Image
        var time: Double
        var subjects: [TrackedSubject]
    }

    /// What the thread hands back, shared with it.
    private final class Outcome: Sendable {
        struct State {
            var gestures: [GestureEvent] = []
            var failure: DetectorError?
            var seconds = 0.0
            var handled = 0
        }
        let state = Mutex(State())
    }

    private let inbox = NewestValue<Look>()
    private let outcome = Outcome()
    private let watching: OwnedThread

    /// The thread takes `watch` (its networks are used by one thread at a time).
    package init(watch: GestureWatch) {
        let (inbox, outcome) = (inbox, outcome)
        watching = OwnedThread(named: "docktrack hands", handingOver: watch) { watch in
            while let look = inbox.take() {
                defer { outcome.state.withLock { $0.handled += 1 } }
                let before = watch.seconds
                do throws(DetectorError) {
                    let found = try watch.look(in: look.image, at: look.time, subjects: look.subjects)
                    outcome.state.withLock {
                        $0.gestures += found
                        $0.seconds += watch.seconds - before
                    }
                } catch {
                    outcome.state.withLock { $0.failure = error }
                    return
                }
            }
        }
    }

    deinit { stop() }

    /// Hands a frame over; replaces one still waiting.
    package func offer(_ image: Image, at time: Double, subjects: [TrackedSubject]) {
        inbox.put(Look(image: image, time: time, subjects: subjects))
    }

    /// The gestures recognized since the last call, oldest first, with the CPU seconds the watch
    /// spent meanwhile; throws the watch's failure.
    package func takeGestures() throws(DetectorError) -> (gestures: [GestureEvent], seconds: Double) {
        let (taken, failure) = outcome.state.withLock { state in
            defer {
                state.gestures = []
                state.seconds = 0
            }
            return ((state.gestures, state.seconds), state.failure)
        }
        if let failure { throw failure }
        return taken
    }

    /// Frames the thread is done with (tests wait on it).
    package var handledFrames: Int { outcome.state.withLock { $0.handled } }

    /// Ends the thread after the look in progress and waits for it.
    package func stop() {
        inbox.close()
        watching.join()
    }
}
