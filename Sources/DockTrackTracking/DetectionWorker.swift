import DockTrackCore
import DockTrackMedia
import DockTrackDetection
import Foundation

/// A detector on a thread of its own, for live input: the newest frame wins.
///
/// ``offer(_:)`` hands a frame over and returns at once; if the detector is still busy with an
/// earlier frame, the new one replaces whatever was waiting (frames never queue up). Finished
/// detections are collected with ``takeResults()``. The caller's per-frame work (tracking,
/// framing, commands) therefore never waits for a detection: capture-to-command latency is that
/// work alone, and detections arrive one detection time late.
public final class DetectionWorker: @unchecked Sendable {
    /// One finished detection: the frame it ran on and how long it took.
    public struct Result: Sendable {
        public var frameIndex: Int
        public var frameTime: Double
        public var observations: [Observation]
        public var seconds: Double
    }

    // Everything below is guarded by `condition`; the detector is used on the worker thread only.
    private let condition = NSCondition()
    private let clock: @Sendable () -> Double
    private var waiting: Frame?
    private var results: [Result] = []
    private var failure: DetectorError?
    private var stopped = false
    private var thread: Thread?
    /// Signalled by the thread when it ends; `stop()` waits for it.
    private let finished = DispatchSemaphore(value: 0)
    private var joined = false
    private var replaced = 0, detected = 0
    /// Frames passed over for newer ones before the detector got to them (read under the lock:
    /// the worker thread counts them).
    public var replacedFrames: Int { counted(\.replaced) }
    /// Whether a frame offered is still waiting for the detector.
    public var hasFrameWaiting: Bool {
        condition.lock()
        defer { condition.unlock() }
        return waiting != nil
    }
    /// Frames the detector has finished.
    public var detectedFrames: Int { counted(\.detected) }

    private func counted(_ count: KeyPath<DetectionWorker, Int>) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return self[keyPath: count]
    }

    /// Frames in a row too small for the detector that are passed over (detected as nothing
    /// ran on them) before the detector counts as failed: a stream whose first pictures after a
    /// reconnect are tiny goes on (a 16x16 one ended `track --reconnect` with hog-body); one
    /// whose pictures all are is an error that says so.
    public static let tooSmallFramesAllowed = 30
    /// Used on the worker thread only.
    private var tooSmallInARow = 0

    /// Frames from one detection's frame to the next one's, at least (by ``Frame/index``).
    public let every: Int
    /// The index of the frame the last detection ran on.
    private var lastDetectedIndex: Int?

    /// `clock` times each detection (``Result/seconds``). `every`: a frame less than that many
    /// frames after the last one detected is not detected (the newest one after it is): a
    /// detector that keeps up with every frame would otherwise take both cores from the frame
    /// loop (Megamind on the emulated camera, detecting every frame: capture-to-command p99 30 ms).
    public init(detector: any Detector, minimumConfidence: Double, every: Int = 1, clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.clock = clock
        self.every = max(1, every)
        let box = DetectorBox(detector)
        let finished = self.finished
        let thread = Thread { [weak self] in
            self?.run(box.detector, minimumConfidence: minimumConfidence)
            finished.signal()
        }
        thread.name = "docktrack-detection"
        self.thread = thread
        thread.start()
    }

    deinit { stop() }

    /// Hands `frame` to the detector; replaces a frame still waiting for it.
    public func offer(_ frame: Frame) {
        condition.lock()
        if waiting != nil { replaced += 1 }
        waiting = frame
        condition.signal()
        condition.unlock()
    }

    /// The detections finished since the last call, oldest first; throws the detector's failure.
    public func takeResults() throws(DetectorError) -> [Result] {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        let taken = results
        results = []
        return taken
    }

    /// Ends the thread after the detection in progress, and waits (up to 10 s) for it to end: a
    /// process that exits while the thread is still inside OpenCV crashes in its static
    /// destructors.
    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        let wait = !joined && thread.map { !$0.isFinished && $0 != Thread.current } ?? false
        joined = true
        condition.unlock()
        if wait { _ = finished.wait(timeout: .now() + 10) }
    }

    private func run(_ detector: any Detector, minimumConfidence: Double) {
        while true {
            condition.lock()
            while waiting == nil && !stopped { condition.wait() }
            if stopped {
                condition.unlock()
                return
            }
            let frame = waiting!
            waiting = nil
            if let last = lastDetectedIndex, frame.index >= last, frame.index - last < every {
                condition.unlock()
                continue
            }
            lastDetectedIndex = frame.index
            condition.unlock()
            let started = clock()
            do {
                let observations = try detector.detect(in: frame.image, minimumConfidence: minimumConfidence)
                let result = Result(frameIndex: frame.index, frameTime: frame.time, observations: observations,
                                    seconds: clock() - started)
                tooSmallInARow = 0
                condition.lock()
                results.append(result)
                detected += 1
                condition.unlock()
            } catch .frameTooSmall where tooSmallInARow + 1 < Self.tooSmallFramesAllowed {
                tooSmallInARow += 1
            } catch {
                condition.lock()
                failure = error
                condition.unlock()
                return
            }
        }
    }

    /// Carries the detector to the worker thread, which is its only user from then on.
    private final class DetectorBox: @unchecked Sendable {
        let detector: any Detector
        init(_ detector: any Detector) { self.detector = detector }
    }
}
