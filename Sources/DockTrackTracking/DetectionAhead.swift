import DockTrackCore
import DockTrackMedia
import DockTrackSystem
import DockTrackDetection
import Foundation

/// A file decoded and detected ahead of the tracker, each on a thread of its own.
///
/// A reader thread decodes the selected frames into a short queue; a detection thread runs
/// the detector on every `every`-th of them as soon as it is decoded; ``next()`` hands the
/// frames out in order, each detection frame with what was found in it. The tracker therefore
/// gets exactly what it would get detecting every Nth frame itself (the same frames, the same
/// observations, in the same order), while decoding and tracking run beside the detector
/// instead of between its runs. For files; a camera's newest frame wins (``DetectionWorker``).
///
/// With a ``ShotBoundary``, the reader also finds the film's cuts: the first frame of each
/// shot is a detection frame too, and the next come 2 and 8 frames into the shot before the
/// schedule is back to every `every`-th frame, so that the people of a new shot (or of the
/// file's first frames) are found within a few frames however sparse the schedule.
package final class DetectionAhead: Sendable {
    /// What the reader, the detection thread and the caller share. The source is the reader's
    /// alone, the detector the detection thread's.
    private struct Shared {
        var decoded: [(frame: Frame, at: Double, detect: Bool, startsShot: Bool)] = []
        var waiting: [Frame] = []
        /// By frame index: what the look found, `nil` when the detector passed the frame over.
        var found: [Int: [Observation]?] = [:]
        var finished = false
        var readFailure: (any Error)?
        var detectFailure: DetectorError?
        var stopped = false
        /// Frames read so far (the reader's count), and frames handed out.
        var read = 0
        var handedOut = 0
        /// The reader's count at the last detection frame it chose, and at the first frame of
        /// the shot it is in.
        var lastDetectionRead = 0
        var shotStartRead = 0
    }
    private let shared = Monitor(Shared())
    /// Decodes frames ahead; alone uses the source and the cut finder.
    private let reading: OwnedThread
    /// Detects in the frames read; alone uses the detector.
    private let detecting: OwnedThread
    /// Frames decoded ahead of the one handed out at most.
    package let depth: Int
    package let every: Int

    /// Starts reading the frames of `source` that `selection` picks, and detecting with
    /// `detector` in every `every`-th of them (the first included), and, with `cuts`, in the
    /// first frame of every shot. `clock` stamps when each frame was decoded. The source and
    /// the cut finder become the reader thread's, the detector the detection thread's: the
    /// caller does not use them again until ``stop()`` has returned.
    package init(source: some FrameSource, selection: FrameSelection = FrameSelection(), detector: any Detector,
                every: Int, minimumConfidence: Double, cuts: ShotBoundary? = nil,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        let every = max(1, every)
        self.every = every
        // Enough for the next detection frame to be decoded while the tracker is at this one.
        let depth = every + 2
        self.depth = depth
        let shared = shared
        reading = OwnedThread(named: "docktrack read", handingOver: (source: source as any FrameSource, cuts: cuts)) { reader in
            var reader = reader
            Self.readAll(&reader.source, cuts: &reader.cuts, selection: selection, every: every, depth: depth, clock: clock, shared: shared)
        }
        detecting = OwnedThread(named: "docktrack detect", handingOver: detector) { detector in
            Self.detectAll(detector, minimumConfidence: minimumConfidence, shared: shared)
        }
    }

    deinit { stop() }

    /// The next frame, the observations in it when it is a detection frame (`nil` on the
    /// others), and when it was decoded (by the clock given, ``MonotonicClock`` by default);
    /// `nil` after the last frame. Throws the source's or the detector's failure after every
    /// frame before it was handed out.
    package func next() throws -> (frame: Frame, observations: [Observation]?, decoded: Double)? {
        try nextWithCut().map { ($0.frame, $0.observations, $0.decoded) }
    }

    /// ``next()``, with whether a cut leads into the frame (always `false` without a
    /// ``ShotBoundary``).
    package func nextWithCut() throws -> (frame: Frame, observations: [Observation]?, decoded: Double, startsShot: Bool)? {
        let next = try shared.withLock(waitingFor: { !$0.decoded.isEmpty || $0.finished }) { shared, _ in
            guard !shared.decoded.isEmpty else {
                if let failure = shared.readFailure { throw failure }
                return nil as (frame: Frame, at: Double, detect: Bool, startsShot: Bool)?
            }
            shared.handedOut += 1
            return shared.decoded.removeFirst()
        }
        guard let (frame, decodedAt, detect, startsShot) = next else { return nil }
        guard detect else { return (frame, nil, decodedAt, startsShot) }
        let observations = try shared.withLock(waitingFor: { $0.found[frame.index] != nil || $0.detectFailure != nil }) { shared, _ in
            if let failure = shared.detectFailure { throw failure }
            return shared.found.removeValue(forKey: frame.index) ?? nil
        }
        return (frame, observations, decodedAt, startsShot)
    }

    /// Ends both threads (after the decode or detection in progress) and waits for them: a
    /// process that exits while one is inside FFmpeg or OpenCV crashes in their static
    /// destructors.
    package func stop() {
        shared.withLock { $0.stopped = true }
        detecting.join()
        reading.join()
    }

    private static func readAll(_ source: inout any FrameSource, cuts: inout ShotBoundary?, selection: FrameSelection, every: Int,
                                depth: Int, clock: @Sendable () -> Double, shared: Monitor<Shared>) {
        do {
            try selection.forEachFrame(of: &source, { frame in
                let startsShot = cuts?.startsShot(frame.image) ?? false
                let hasCuts = cuts != nil
                let decodedAt = clock()
                shared.withLock { shared in
                    if startsShot { shared.shotStartRead = shared.read }
                    let intoShot = shared.lastDetectionRead - shared.shotStartRead
                    let interval = !hasCuts ? every : min(every, intoShot == 0 ? 2 : intoShot == 2 ? 6 : every)
                    let scheduled = shared.read == 0 || startsShot || shared.read - shared.lastDetectionRead >= interval
                    // A second look at the start, as TrackingPipeline.process(_:) takes (the schedule goes on
                    // from the first).
                    let detect = scheduled || (!hasCuts && shared.read == TrackingPipeline.secondLook)
                    if scheduled { shared.lastDetectionRead = shared.read }
                    if detect { shared.waiting.append(frame) }
                    shared.decoded.append((frame, decodedAt, detect, startsShot))
                    shared.read += 1
                }
            }, stopping: {
                // Waits for room in the queue before the next frame is read.
                shared.withLock(waitingFor: { $0.stopped || $0.read - $0.handedOut < depth }) { shared, _ in shared.stopped }
            })
        } catch {
            shared.withLock { $0.readFailure = error }
        }
        shared.withLock { $0.finished = true }
    }

    private static func detectAll(_ detector: any Detector, minimumConfidence: Double, shared: Monitor<Shared>) {
        while true {
            // Stopped, or the file ended and all is detected: nothing to take.
            let taken = shared.withLock(waitingFor: { !$0.waiting.isEmpty || $0.stopped || $0.finished }) { shared, _ -> Frame? in
                shared.stopped || shared.waiting.isEmpty ? nil : shared.waiting.removeFirst()
            }
            guard let frame = taken else { return }
            do {
                let observations = try detector.lookIfNeeded(in: frame.image, minimumConfidence: minimumConfidence)
                shared.withLock { $0.found[frame.index] = .some(observations) }
            } catch {
                shared.withLock { $0.detectFailure = error }
                return
            }
        }
    }
}
