import DockTrackCore
import DockTrackSystem
import DockTrackMedia
import DockTrackDetection
import Foundation
import Synchronization

/// A detector on a thread of its own, for live input: the newest frame wins.
///
/// ``offer(_:)`` hands a frame over and returns at once; if the detector is still busy with an
/// earlier frame, the new one replaces whatever was waiting (frames never queue up). Finished
/// detections are collected with ``takeResults()``. The caller's per-frame work (tracking,
/// framing, commands) therefore never waits for a detection: capture-to-command latency is that
/// work alone, and detections arrive one detection time late.
package final class DetectionWorker: Sendable {
    /// One finished detection: the frame it ran on and how long it took.
    package struct Result: Sendable {
        package var frameIndex: Int
        package var frameTime: Double
        package var observations: [Observation]
        package var seconds: Double
    }

    /// What the detection thread hands back, shared with it.
    private final class Outcome: Sendable {
        struct State {
            var results: [Result] = []
            var failure: DetectorError?
            var detected = 0
            var handled = 0
        }
        let state = Mutex(State())
    }

    private let inbox = NewestValue<Frame>()
    private let outcome = Outcome()
    /// Signalled by the thread when it ends; `stop()` waits for it.
    /// Detects the newest frame until ``stop()``; alone uses the detector.
    private let detecting: OwnedThread

    /// Frames passed over for newer ones before the detector got to them.
    package var replacedFrames: Int { inbox.replacedCount }
    /// Frames the detector has finished.
    package var detectedFrames: Int { outcome.state.withLock { $0.detected } }
    /// Frames the thread has taken and is done with: detected, passed over (too soon after the
    /// last detection, or nothing to look at) or too small. A caller that offers a frame and
    /// waits for this to grow knows the thread has finished with it (tests wait on it).
    package var handledFrames: Int { outcome.state.withLock { $0.handled } }
    /// Whether a frame offered is still waiting for the detector.
    package var hasFrameWaiting: Bool { inbox.hasValue }

    /// Frames in a row too small for the detector that are passed over (detected as nothing
    /// ran on them) before the detector counts as failed: a stream whose first pictures after a
    /// reconnect are tiny goes on (a 16x16 one ended `track --reconnect` with hog-body); one
    /// whose pictures all are is an error that says so.
    package static let tooSmallFramesAllowed = 30

    /// Frames from one detection's frame to the next one's, at least (by ``Frame/index``).
    package let every: Int

    /// `clock` times each detection (``Result/seconds``). `every`: a frame less than that many
    /// frames after the last one detected is not detected (the newest one after it is): a
    /// detector that keeps up with every frame would otherwise take both cores from the frame
    /// loop (Megamind on the emulated camera, detecting every frame: capture-to-command p99 30 ms).
    /// The detector becomes the thread's (it holds OpenCV networks, used by one thread at a
    /// time): the caller does not use it again until ``stop()`` has returned.
    package init(detector: any Detector, minimumConfidence: Double, every: Int = 1, clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.every = max(1, every)
        let (inbox, outcome, every) = (inbox, outcome, self.every)
        detecting = OwnedThread(named: "docktrack detect", handingOver: detector) { detector in
            Self.run(detector, minimumConfidence: minimumConfidence, every: every, clock: clock, inbox: inbox, outcome: outcome)
        }
    }

    deinit { stop() }

    /// Hands `frame` to the detector; replaces a frame still waiting for it.
    package func offer(_ frame: Frame) {
        inbox.put(frame)
    }

    /// The detections finished since the last call, oldest first; throws the detector's failure.
    package func takeResults() throws(DetectorError) -> [Result] {
        let (taken, failure) = outcome.state.withLock { outcome in
            defer { outcome.results = [] }
            return (outcome.results, outcome.failure)
        }
        if let failure { throw failure }
        return taken
    }

    /// Ends the thread after the detection in progress, and waits for it to end: a process that
    /// exits while the thread is still inside OpenCV crashes in its static destructors.
    package func stop() {
        inbox.close()
        detecting.join()
    }

    /// The detection thread: the newest frame at least `every` frames after the last one
    /// detected, until the inbox closes or the detector fails.
    private static func run(_ detector: any Detector, minimumConfidence: Double, every: Int, clock: @Sendable () -> Double,
                            inbox: NewestValue<Frame>, outcome: Outcome) {
        var lastDetectedIndex: Int?
        var tooSmallInARow = 0
        while let frame = inbox.take() {
            defer { outcome.state.withLock { $0.handled += 1 } }
            if let last = lastDetectedIndex, frame.index >= last, frame.index - last < every { continue }
            lastDetectedIndex = frame.index
            let started = clock()
            do {
                guard let observations = try detector.lookIfNeeded(in: frame.image, minimumConfidence: minimumConfidence) else {
                    tooSmallInARow = 0
                    continue
                }
                let result = Result(frameIndex: frame.index, frameTime: frame.time, observations: observations,
                                    seconds: clock() - started)
                tooSmallInARow = 0
                outcome.state.withLock {
                    $0.results.append(result)
                    $0.detected += 1
                }
            } catch .frameTooSmall where tooSmallInARow + 1 < tooSmallFramesAllowed {
                tooSmallInARow += 1
            } catch {
                outcome.state.withLock { $0.failure = error }
                return
            }
        }
    }
}
