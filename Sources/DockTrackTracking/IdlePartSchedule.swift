import DockTrackCore
import DockTrackMedia
import DockTrackDetection

/// Runs the parts of a combined detector (faces, bodies) only as often as they earn: a part
/// that found nothing in its last run (nothing kept once merged) waits twice as many
/// detection rounds as before, up to `maximumInterval`; a part that found something runs
/// every round again.
///
/// Far from the camera no face is big enough for the face detector, and close to it no whole
/// body fits for the body detector: the idle part then costs a quarter of its time (at the
/// default of 4) and a new face or body is still found within 4 rounds. A detector that is not
/// a ``CombinedDetector`` runs every round.
public final class IdlePartSchedule: Detector {
    public let detector: any Detector
    public let maximumInterval: Int
    /// Per part: rounds to wait between runs now, and rounds since its last run.
    private var intervals: [Int]
    private var waited: [Int]
    /// Runs of each part, and rounds, so far (for the bench and tests).
    public private(set) var runs: [Int]
    public private(set) var rounds = 0

    public var name: String { detector.name }

    public init(_ detector: any Detector, maximumInterval: Int = 4) {
        self.detector = detector
        self.maximumInterval = max(1, maximumInterval)
        let count = (detector as? CombinedDetector)?.parts.count ?? 1
        intervals = Array(repeating: 1, count: count)
        waited = Array(repeating: 0, count: count)
        runs = Array(repeating: 0, count: count)
    }

    public func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        rounds += 1
        guard let combined = detector as? CombinedDetector else {
            runs[0] += 1
            return try detector.detect(in: image, minimumConfidence: minimumConfidence)
        }
        var tooSmall: DetectorError?
        var due = 0, small = 0
        var ran: [(part: Int, found: [Observation])] = []
        for part in combined.parts.indices {
            guard waited[part] + 1 >= intervals[part] else {
                waited[part] += 1
                continue
            }
            due += 1
            // As in CombinedDetector: a part that cannot look at a frame this small is passed
            // over (and waits as long as an idle part); an error only when no part can look.
            let found: [Observation]
            do {
                found = try combined.parts[part].detect(in: image, minimumConfidence: minimumConfidence)
            } catch .frameTooSmall(let detector, let size, let minimum) {
                tooSmall = tooSmall ?? .frameTooSmall(detector: detector, size: size, minimum: minimum)
                small += 1
                waited[part] = 0
                intervals[part] = maximumInterval
                continue
            }
            runs[part] += 1
            waited[part] = 0
            ran.append((part, found))
        }
        if due == combined.parts.count, small == due, let tooSmall { throw tooSmall }
        let merged = CombinedDetector.merged(ran.flatMap(\.found))
        // A part found something when any of it is kept: bodies dropped as pieces of a
        // close-up leave the body part idle.
        for (part, found) in ran {
            intervals[part] = found.contains(where: merged.contains) ? 1 : min(intervals[part] * 2, maximumInterval)
        }
        return merged
    }
}
