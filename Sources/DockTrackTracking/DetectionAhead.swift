import DockTrackCore
import DockTrackMedia
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
public final class DetectionAhead: @unchecked Sendable {
    // Everything below is guarded by `condition`; the source is used on the reader thread
    // only, the detector on the detection thread only.
    private let condition = NSCondition()
    private var decoded: [(frame: Frame, at: Double, detect: Bool, startsShot: Bool)] = []
    private var waiting: [Frame] = []
    private var found: [Int: [Observation]] = [:]
    private var finished = false
    private var readFailure: (any Error)?
    private var detectFailure: DetectorError?
    private var stopped = false
    /// The two threads, until they end; ``stop()`` waits for them.
    private let running = DispatchGroup()
    /// Frames read so far (the reader's count), and frames handed out.
    private var read = 0
    /// The reader's count at the last detection frame it chose, and at the first frame of the
    /// shot it is in.
    private var lastDetectionRead = 0
    private var shotStartRead = 0
    private var handedOut = 0
    /// Frames decoded ahead of the one handed out at most.
    public let depth: Int
    public let every: Int
    private let clock: @Sendable () -> Double

    /// Starts reading the frames of `source` that `selection` picks, and detecting with
    /// `detector` in every `every`-th of them (the first included), and, with `cuts`, in the
    /// first frame of every shot. `clock` stamps when each frame was decoded.
    public init(source: some FrameSource, selection: FrameSelection = FrameSelection(), detector: any Detector,
                every: Int, minimumConfidence: Double, cuts: ShotBoundary? = nil,
                clock: @escaping @Sendable () -> Double = MonotonicClock.now) {
        self.every = max(1, every)
        self.clock = clock
        // Enough for the next detection frame to be decoded while the tracker is at this one.
        depth = self.every + 2
        let box = Owned(source: source, detector: detector, cuts: cuts)
        let running = self.running
        running.enter()
        running.enter()
        let reader = Thread { [weak self] in
            self?.readAll(box, selection: selection)
            running.leave()
        }
        reader.name = "docktrack-reader"
        reader.start()
        let detection = Thread { [weak self] in
            self?.detectAll(box, minimumConfidence: minimumConfidence)
            running.leave()
        }
        detection.name = "docktrack-detection"
        detection.start()
    }

    /// Threads hold this object while they run: call ``stop()`` when done before the end. (The
    /// last reference may be a thread's own, as it ends: nothing is waited for here.)
    deinit { askToStop() }

    /// The next frame, the observations in it when it is a detection frame (`nil` on the
    /// others), and when it was decoded (by the clock given, ``MonotonicClock`` by default);
    /// `nil` after the last frame. Throws the source's or the detector's failure after every
    /// frame before it was handed out.
    public func next() throws -> (frame: Frame, observations: [Observation]?, decoded: Double)? {
        try nextWithCut().map { ($0.frame, $0.observations, $0.decoded) }
    }

    /// ``next()``, with whether a cut leads into the frame (always `false` without a
    /// ``ShotBoundary``).
    public func nextWithCut() throws -> (frame: Frame, observations: [Observation]?, decoded: Double, startsShot: Bool)? {
        condition.lock()
        defer { condition.unlock() }
        while decoded.isEmpty && !finished { condition.wait() }
        guard !decoded.isEmpty else {
            if let readFailure { throw readFailure }
            return nil
        }
        let (frame, decodedAt, detect, startsShot) = decoded.removeFirst()
        handedOut += 1
        condition.broadcast()
        guard detect else { return (frame, nil, decodedAt, startsShot) }
        while found[frame.index] == nil && detectFailure == nil { condition.wait() }
        if let detectFailure { throw detectFailure }
        return (frame, found.removeValue(forKey: frame.index), decodedAt, startsShot)
    }

    /// Ends both threads (after the decode or detection in progress) and waits (up to 10 s) for
    /// them: a process that exits while one is inside FFmpeg or OpenCV crashes in their static
    /// destructors.
    public func stop() {
        askToStop()
        _ = running.wait(timeout: .now() + 10)
    }

    private func askToStop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func readAll(_ owned: Owned, selection: FrameSelection) {
        do {
            try selection.forEachFrame(of: &owned.source, { frame in
                let startsShot = owned.cuts?.startsShot(frame.image) ?? false
                condition.lock()
                defer { condition.unlock() }
                if startsShot { shotStartRead = read }
                let intoShot = lastDetectionRead - shotStartRead
                let interval = owned.cuts == nil ? every : min(every, intoShot == 0 ? 2 : intoShot == 2 ? 6 : every)
                let detect = read == 0 || startsShot || read - lastDetectionRead >= interval
                if detect {
                    lastDetectionRead = read
                    waiting.append(frame)
                }
                decoded.append((frame, clock(), detect, startsShot))
                read += 1
                condition.broadcast()
            }, stopping: {
                // Waits for room in the queue before the next frame is read.
                condition.lock()
                defer { condition.unlock() }
                while !stopped && read - handedOut >= depth { condition.wait() }
                return stopped
            })
        } catch {
            condition.lock()
            readFailure = error
            condition.unlock()
        }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    private func detectAll(_ owned: Owned, minimumConfidence: Double) {
        while true {
            condition.lock()
            while waiting.isEmpty && !stopped && !finished { condition.wait() }
            if stopped || waiting.isEmpty {  // stopped, or the file ended and all is detected
                condition.unlock()
                return
            }
            let frame = waiting.removeFirst()
            condition.unlock()
            do {
                let observations = try owned.detector.detect(in: frame.image, minimumConfidence: minimumConfidence)
                condition.lock()
                found[frame.index] = observations
                condition.broadcast()
                condition.unlock()
            } catch {
                condition.lock()
                detectFailure = error
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    /// The source and the cut finder (the reader's) and the detector (the detection thread's),
    /// each handed to the one thread that uses it from then on.
    private final class Owned: @unchecked Sendable {
        var source: any FrameSource
        var cuts: ShotBoundary?
        let detector: any Detector
        init(source: any FrameSource, detector: any Detector, cuts: ShotBoundary?) {
            self.source = source
            self.detector = detector
            self.cuts = cuts
        }
    }
}
