import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

/// Where a pipeline's hands are watched: on the frame's thread (files: the same gestures run
/// after run), or on a thread of their own (live input, as detection is).
enum HandsWatching {
    case onFrameThread(GestureWatch)
    case onThread(GestureThread)
}

extension TrackingPipeline {
    /// Watches tracked people's raised hands (``GestureWatch``): an open palm held up chooses
    /// its person as ``selectSubjects(_:)`` does, from the next frame on; the person already
    /// chosen alone doing it again is let go (automatic ranking again). The gestures are taken
    /// with ``takeGestures()``. With ``Params/asyncDetection`` (live input) the watch runs on a
    /// thread of its own (``GestureThread``), stopped with ``stopThreads()``.
    package func watchGestures(models: ModelStore, params: GestureWatch.Params = GestureWatch.Params()) throws(DetectorError) {
        let watch = try GestureWatch(models: models, params: params)
        hands = self.params.asyncDetection ? .onThread(GestureThread(watch: watch)) : .onFrameThread(watch)
    }

    /// The gestures recognized since the last call, oldest first.
    package func takeGestures() -> [GestureEvent] {
        defer { gesturesRecognized = [] }
        return gesturesRecognized
    }

    /// Whether hands are watched.
    package var watchesGestures: Bool { hands != nil }

    /// The hands' own thread, when they are watched on one.
    package var handsThread: GestureThread? {
        if case .onThread(let thread) = hands { thread } else { nil }
    }

    /// Ends the pipeline's threads (detection, hands) and waits for them.
    package func stopThreads() {
        worker?.stop()
        if case .onThread(let thread) = hands { thread.stop() }
    }

    /// The hands of this frame's subjects looked at (or handed to their thread); a "follow me"
    /// chooses or lets go its person.
    func watchHands(in image: Image, at time: Double) throws(DetectorError) {
        let found: [GestureEvent], spent: Double
        switch hands {
        case nil: return
        case .onFrameThread(let watch):
            let before = watch.seconds
            found = try watch.look(in: image, at: time, subjects: subjects)
            spent = watch.seconds - before
            // Called from within the cues-and-ranking stage's timing: its time moves to its own stage.
            stageSeconds.cuesAndRanking -= spent
        case .onThread(let thread):
            thread.offer(image, at: time, subjects: subjects)
            (found, spent) = try thread.takeGestures()
        }
        stageSeconds.gestures += spent
        for event in found {
            gesturesRecognized.append(event)
            guard event.kind == .followMe, var ranker = ranker as? SaliencyRanker else { continue }
            if ranker.selection == [event.subject] { ranker.clearSelection() } else { ranker.selectSubjects([event.subject]) }
            self.ranker = ranker
        }
    }
}
