import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

extension TrackingPipeline {
    /// Watches tracked people's raised hands (``GestureWatch``): an open palm held up chooses
    /// its person as ``selectSubjects(_:)`` does, from the next frame on; the person already
    /// chosen alone doing it again is let go (automatic ranking again). The gestures are taken
    /// with ``takeGestures()``.
    package func watchGestures(models: ModelStore, params: GestureWatch.Params = GestureWatch.Params()) throws(DetectorError) {
        gestureWatch = try GestureWatch(models: models, params: params)
    }

    /// The gestures recognized since the last call, oldest first.
    package func takeGestures() -> [GestureEvent] {
        defer { gesturesRecognized = [] }
        return gesturesRecognized
    }

    /// Whether hands are watched.
    package var watchesGestures: Bool { gestureWatch != nil }

    /// The hands of this frame's subjects looked at; a "follow me" chooses or lets go its person.
    func watchHands(in image: Image, at time: Double) throws(DetectorError) {
        guard let gestureWatch else { return }
        // Called from within the cues-and-ranking stage's timing: its time moves to its own stage.
        let before = gestureWatch.seconds
        defer {
            stageSeconds.gestures += gestureWatch.seconds - before
            stageSeconds.cuesAndRanking -= gestureWatch.seconds - before
        }
        for event in try gestureWatch.look(in: image, at: time, subjects: subjects) {
            gesturesRecognized.append(event)
            guard event.kind == .followMe, var ranker = ranker as? SaliencyRanker else { continue }
            if ranker.selection == [event.subject] { ranker.clearSelection() } else { ranker.selectSubjects([event.subject]) }
            self.ranker = ranker
        }
    }
}
