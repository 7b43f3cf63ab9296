import DockTrackCore
import DockTrackMedia
import DockTrackDetection

/// Runs the parts of a combined detector (faces, bodies) only as often as they earn: a part
/// that found nothing in its last run (nothing kept once merged) waits twice as many
/// detection rounds as before, up to `maximumInterval`; a part that found something runs
/// every round again.
///
/// Far from the camera no face is big enough for the face detector, and close to it no whole
/// body fits for the body detector: the idle part then costs an eighth of its time (at the
/// default of 8) and a new face or body is still found within 8 rounds (32 frames, about a
/// second, at track's schedule for a 30 fps file). A detector that is not a
/// ``CombinedDetector`` runs every round.
///
/// A part that found something and can look for tall things only (``SizeLimitedDetector``)
/// looks, on its next runs, only for things at least half as tall as the smallest it found,
/// and for everything again every `fullSearchInterval`-th run: the tracker follows what was
/// found between detections, and the small sizes are where the cost is (MTCNN on a 1280x720
/// frame with a close-up face: about a tenth of the whole search). A new face much smaller
/// than the ones in view is found within `fullSearchInterval` runs.
///
/// A part that can also look in parts of the picture only (``RegionLimitedDetector``: the
/// body detector), and found something last time, looks between full searches only where the
/// picture moved since its last run (``MotionRegions``) and around what it found then: on a
/// still camera a new person walks in, and the people standing are followed by the tracker and
/// found again where they were. A turning camera, a cut or a change of light moves most of the
/// picture, and that run searches all of it. `track samples/vtest.avi` takes about a third less
/// time this way, its labelled walks tracked as well.
///
/// A part whose last run found faces only runs every `faceInterval` rounds rather than every
/// round, when the pipeline looks for each tracked face again on every frame between (O-Net
/// where it is predicted, ``TrackingPipeline/redetector``): what the round adds for faces in
/// view is a new face, found a round later. Bodies, followed between rounds by their look
/// alone, keep every round. On the rounds a face part rests, the faces it found last still
/// drop the bodies beside a close-up, as faces found in the round do.
///
/// A face part that says its smallest face (``SmallestFaceDetector``) does not look where the
/// picture moved only because people too short to show such a face walked: the bodies the
/// other parts kept, where they are and where they were at each round since its last run.
///
/// Asked through ``lookIfNeeded(in:minimumConfidence:)``, a whole round is passed over when
/// nothing calls for it: a part that finds every person ran at the last round that looked,
/// and the picture has not moved since, outside what that round kept (each thing grown a
/// little: a person turning or talking in place, not walking). Nobody new can have come in,
/// nobody walked, and the tracker follows those in view by their look
/// (``TrackingPipeline/bodyRedetector``). At most
/// `longestNeedlessRest` rounds in a row are passed over, so that someone standing still whom
/// a look missed is looked for again.
package final class IdlePartSchedule: Detector {
    package let detector: any Detector
    package let maximumInterval: Int
    package let fullSearchInterval: Int
    package let faceInterval: Int
    /// The most rounds in a row ``lookIfNeeded(in:minimumConfidence:)`` passes over.
    package let longestNeedlessRest: Int
    /// How far around each thing kept at the last look the picture may move per round passed
    /// over and still be explained by it: a quarter of its width sideways, a tenth of its
    /// height up and down (in place, not walking). At its own width a round, vtest's walkers
    /// were carried past their looks and drifted: false people a frame 0.020 -> 0.133.
    package static let needlessGrowth = (x: 0.25, y: 0.1)
    /// The tallest a run between full searches leaves out, as a fraction of the smallest
    /// thing the last run found.
    package static let sizeMargin = 0.5
    /// How many times `fullSearchInterval` a face part guided by a people part waits between
    /// whole-picture searches (``run(_:part:in:minimumConfidence:people:)``). On vtest.avi at
    /// 1280x720, one core: the face part 0.62 -> 0.2 ms a frame (bench).
    package static let guidedFullSearchFactor = 4
    /// Of a guided face part's whole-picture searches, how many in a row are its quick look
    /// (``QuickWholeFaceLook``) before one is its full look: the full look (MTCNN over the
    /// whole picture: about 80 ms at 1280x720 on one core) is for a small face whose person the
    /// people part missed; the quick one (about 3 ms) finds the faces large enough for it.
    package static let quickLooksPerFullLook = 3
    /// The share of the picture the areas a guided face part would search must cover (grown as
    /// the detector grows them, about twice each way) for its quick whole look to take their place.
    package static let quickLookShare = 0.25

    /// The share of the picture `regions` cover once grown by half their size each way (as the
    /// face part grows them), overlaps counted once on a 32x32 grid.
    static func coveredShare(of regions: [UnitRect]) -> Double {
        let cells = 32
        var covered = Set<Int>()
        for r in regions {
            let grown = UnitRect(x: r.x - r.width / 2, y: r.y - r.height / 2, width: r.width * 2, height: r.height * 2).clippedToUnit()
            guard grown.width > 0, grown.height > 0 else { continue }
            let x0 = Int(grown.x * Double(cells)), x1 = min(cells - 1, Int((grown.x + grown.width) * Double(cells)))
            let y0 = Int(grown.y * Double(cells)), y1 = min(cells - 1, Int((grown.y + grown.height) * Double(cells)))
            guard x0 <= x1, y0 <= y1 else { continue }
            for y in y0...y1 { for x in x0...x1 { covered.insert(y * cells + x) } }
        }
        return Double(covered.count) / Double(cells * cells)
    }
    /// Per part: rounds to wait between runs now, and rounds since its last run.
    private var intervals: [Int]
    private var waited: [Int]
    /// Per part: the height (unit) of the smallest thing its last run found and kept, `nil`
    /// when it found nothing; its runs since its last full search.
    private var smallestFound: [Double?]
    private var sinceFullSearch: [Int]
    /// Per part: quick whole-picture looks since its last full look.
    private var quickSinceFullLook: [Int]
    /// Quick whole-picture looks of each part so far (counted in `fullSearches` too).
    package private(set) var quickSearches: [Int]
    /// Full searches of each part so far (the rest of `runs` looked for tall things only).
    package private(set) var fullSearches: [Int]
    /// Runs of each part that looked only where the picture moved and around what it found.
    package private(set) var regionSearches: [Int]
    package let motion: MotionRegions.Params
    /// Per part that can look in regions: the picture's cells at its last run.
    private var cellsAtLastRun: [MotionCells?]
    /// Per part: what its last run found and kept.
    private var keptAtLastRun: [[Observation]]
    /// Per face part: where the people too short to show it a face were at each round since
    /// its last run (``facelessBodies(for:part:in:)``): the picture moved there because they
    /// walked.
    private var facelessSinceLastRun: [[UnitRect]]
    /// This round's cells, made at most once a round.
    private var cellsThisRound: (round: Int, cells: MotionCells?)?
    /// The picture's cells at the last round that looked, what that round kept, and whether a
    /// part that finds every person ran in it.
    private var lastLook: (cells: MotionCells?, kept: [Observation], everyPerson: Bool)?
    /// Rounds passed over since the last that looked, and in all (for the bench and tests).
    private var passedInARow = 0
    package private(set) var passedOver = 0
    /// CPU seconds spent deciding whether a round is needed (the picture's cells and where
    /// they moved), for the bench's profile.
    package private(set) var needSeconds = 0.0
    /// Runs of each part, and rounds, so far (for the bench and tests).
    package private(set) var runs: [Int]
    package private(set) var rounds = 0
    /// CPU seconds each part spent looking so far (its thread's), and its name (for the bench's
    /// profile).
    package private(set) var partSeconds: [Double]
    package private(set) var partNames: [String]

    package var name: String { detector.name }
    package func prepare(for size: ImageSize) throws(DetectorError) { try detector.prepare(for: size) }

    package init(_ detector: any Detector, maximumInterval: Int = 8, fullSearchInterval: Int = 8, faceInterval: Int = 1,
                longestNeedlessRest: Int = 0, motion: MotionRegions.Params = MotionRegions.Params()) {
        self.detector = detector
        self.longestNeedlessRest = max(0, longestNeedlessRest)
        self.maximumInterval = max(1, maximumInterval)
        self.fullSearchInterval = max(1, fullSearchInterval)
        self.faceInterval = max(1, faceInterval)
        let count = (detector as? CombinedDetector)?.parts.count ?? 1
        intervals = Array(repeating: 1, count: count)
        waited = Array(repeating: 0, count: count)
        runs = Array(repeating: 0, count: count)
        partSeconds = Array(repeating: 0, count: count)
        partNames = (detector as? CombinedDetector)?.parts.map(\.name) ?? [detector.name]
        smallestFound = Array(repeating: nil, count: count)
        sinceFullSearch = Array(repeating: 0, count: count)
        quickSinceFullLook = Array(repeating: 0, count: count)
        quickSearches = Array(repeating: 0, count: count)
        fullSearches = Array(repeating: 0, count: count)
        regionSearches = Array(repeating: 0, count: count)
        self.motion = motion
        cellsAtLastRun = Array(repeating: nil, count: count)
        keptAtLastRun = Array(repeating: [], count: count)
        facelessSinceLastRun = Array(repeating: [], count: count)
    }

    /// This round's observations, or `nil` when it is passed over because nothing calls for a
    /// look (see the type's notes): the caller treats the frame as one no detector ran on.
    package func lookIfNeeded(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation]? {
        let started = ThreadCPUClock.now()
        let cellSize = Self.needCellSize(for: image.size)
        let cells = longestNeedlessRest > 0 ? try? MotionCells(of: image, cellSize: cellSize) : nil
        let needed = lookNeeded(cells: cells)
        needSeconds += ThreadCPUClock.now() - started
        guard needed else {
            passedInARow += 1
            passedOver += 1
            return nil
        }
        passedInARow = 0
        // The cells are this round's for the parts that look where the picture moved, too.
        if let cells, cellSize == motion.cellSize { cellsThisRound = (rounds + 1, cells) }
        let runsBefore = runs
        let found = try detect(in: image, minimumConfidence: minimumConfidence)
        let everyPerson = (detector as? CombinedDetector).map { combined in
            combined.parts.indices.contains { combined.parts[$0].findsEveryPerson && runs[$0] > runsBefore[$0] }
        } ?? detector.findsEveryPerson
        lastLook = (cells, found, everyPerson)
        return found
    }

    /// The cells the need for a look is judged on: ``MotionRegions/Params/cellSize`` (8 px) in
    /// large pictures, smaller in small ones, at least 96 across: a walker 25 px tall in a 360x270
    /// stream is 3 cells of 8 px, and the cells' mean barely moved when they walked (vtest at
    /// 360x270: 0.913 of the walkers found rather than 0.930).
    static func needCellSize(for size: ImageSize) -> Int {
        max(2, min(MotionRegions.Params().cellSize, size.width / 96))
    }

    /// Whether a round whose picture has `cells` is to look: not when fewer than
    /// `longestNeedlessRest` rounds were passed over, the last look's people part ran, and the
    /// picture moved nowhere but around what it kept.
    private func lookNeeded(cells: MotionCells?) -> Bool {
        guard passedInARow < longestNeedlessRest, let last = lastLook, last.everyPerson, let cells, let earlier = last.cells else { return true }
        let rounds = Double(passedInARow + 1)
        let explained = last.kept.map { found in
            let r = found.rect
            let dx = r.width * Self.needlessGrowth.x * rounds, dy = r.height * Self.needlessGrowth.y * rounds
            return UnitRect(x: r.x - dx, y: r.y - dy, width: r.width + 2 * dx, height: r.height + 2 * dy)
        }
        return MotionRegions.regions(from: earlier, to: cells, params: motion, explained: explained)?.isEmpty != true
    }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        rounds += 1
        guard let combined = detector as? CombinedDetector else {
            let found = try run(detector, part: 0, in: image, minimumConfidence: minimumConfidence)
            smallestFound[0] = found.map(\.rect.height).min()
            keptAtLastRun[0] = found
            return found
        }
        var tooSmall: DetectorError?
        var due = 0, small = 0
        var ran: [(part: Int, found: [Observation])] = []
        // A part that finds every person runs first: the face parts then look only where it
        // found people tall enough to show them a face.
        let peopleParts = combined.parts.indices.filter { combined.parts[$0].findsEveryPerson }
        let order = peopleParts + combined.parts.indices.filter { !combined.parts[$0].findsEveryPerson }
        for part in order {
            guard waited[part] + 1 >= intervals[part] else {
                waited[part] += 1
                continue
            }
            due += 1
            // As in CombinedDetector: a part that cannot look at a frame this small is passed
            // over (and waits as long as an idle part); an error only when no part can look.
            let found: [Observation]
            do {
                // The people found this round, else at their part's last run.
                let people = peopleParts.isEmpty ? nil : peopleParts.flatMap { people in
                    (ran.first { $0.part == people }?.found ?? keptAtLastRun[people]).filter { $0.type == .humanBody }
                }
                found = try run(combined.parts[part], part: part, in: image, minimumConfidence: minimumConfidence, people: people)
            } catch .frameTooSmall(let detector, let size, let minimum) {
                tooSmall = tooSmall ?? .frameTooSmall(detector: detector, size: size, minimum: minimum)
                small += 1
                waited[part] = 0
                intervals[part] = longestRest(of: combined.parts[part])
                continue
            }
            waited[part] = 0
            ran.append((part, found))
        }
        if due == combined.parts.count, small == due, let tooSmall { throw tooSmall }
        // The faces a resting part last found still drop the bodies beside them: a close-up
        // face is not found again on the rounds its part rests, and the body part would
        // otherwise keep its hair and backdrop as people (and then run every round for them).
        let resting = combined.parts.indices.filter { part in !ran.contains { $0.part == part } }
        let merged = CombinedDetector.merged(ran.flatMap(\.found),
                                             besideFaces: resting.flatMap { keptAtLastRun[$0].filter { $0.type == .humanFace }.map(\.rect) })
        // A part found something when any of it is kept: bodies dropped as pieces of a
        // close-up leave the body part idle.
        for (part, found) in ran {
            let kept = found.filter(merged.contains)
            intervals[part] = kept.isEmpty ? min(intervals[part] * 2, longestRest(of: combined.parts[part]))
                : kept.allSatisfy({ $0.type == .humanFace }) ? faceInterval : 1
            smallestFound[part] = kept.map(\.rect.height).min()
            keptAtLastRun[part] = kept
        }
        for part in combined.parts.indices {
            facelessSinceLastRun[part] += facelessBodies(for: combined.parts[part], part: part, in: image.size)
        }
        return merged
    }

    /// The most rounds `part` waits between runs when it finds nothing: its own
    /// ``Detector/longestIdleInterval`` when it says one, within `maximumInterval`.
    private func longestRest(of part: any Detector) -> Int {
        min(maximumInterval, max(1, part.longestIdleInterval ?? maximumInterval))
    }

    /// One run of `part`: for tall things only when it can, found something last time, and its
    /// full search is not due; then, when it can, only where the picture moved and around what
    /// it found.
    ///
    /// `people`: the bodies a part that finds every person found (``Detector/findsEveryPerson``),
    /// `nil` when there is no such part. A face part that can look in regions then looks, between
    /// full searches, only in the top half of those tall enough to show it a face, and around
    /// the faces it found last: where the picture moved is not where faces are, where people are
    /// is. On vtest.avi at 1280x720, where the walkers are too small for a face, the face part
    /// then costs almost nothing between its full searches.
    private func run(_ detector: any Detector, part: Int, in image: Image, minimumConfidence: Double,
                     people: [Observation]? = nil) throws(DetectorError) -> [Observation] {
        let started = ThreadCPUClock.now()
        defer { partSeconds[part] += ThreadCPUClock.now() - started }
        let found: [Observation]
        // The motion since this part's last run, for a part that can use it.
        var moving: [UnitRect]?
        if let people, let faces = detector as? any SmallestFaceDetector, detector is RegionLimitedDetector {
            let tallest = type(of: faces).bodiesWithFacesItFinds * faces.smallestFace(in: image.size)
            moving = people.filter { $0.rect.height >= tallest }.map { body in
                let r = body.rect
                return UnitRect(x: r.x, y: r.y + r.height / 2, width: r.width, height: r.height / 2)
            }
        } else if detector is RegionLimitedDetector {
            let cells = cells(of: image)
            if let cells, let earlier = cellsAtLastRun[part] {
                moving = MotionRegions.regions(from: earlier, to: cells, params: motion,
                                               explained: facelessSinceLastRun[part] + facelessBodies(for: detector, part: part, in: image.size))
            }
            cellsAtLastRun[part] = cells
        }
        facelessSinceLastRun[part] = []
        // A face part guided by the people found looks at the whole picture 4 times less often:
        // a face is where a person is, and the whole-picture look is for a face whose person the
        // network missed (MTCNN over 1280x720: about 120 ms on one core).
        let guided = people != nil && detector is any SmallestFaceDetector
        let fullSearchDue = sinceFullSearch[part] + 1 >= fullSearchInterval * (guided ? Self.guidedFullSearchFactor : 1)
        let smallestHeight = (smallestFound[part] ?? 0) * Self.sizeMargin
        // Where people are close to the camera the areas around them are large, and the cascade
        // over them costs more than the quick look at the whole picture (Megamind at 1280x720:
        // region searches were nearly all of the face part's time), which sees every face this
        // part kept: the quick look then.
        let regions = moving.map { $0 + keptAtLastRun[part].map(\.rect) }
        if !fullSearchDue, guided, let quick = detector as? any QuickWholeFaceLook, let regions,
           !keptAtLastRun[part].isEmpty, keptAtLastRun[part].allSatisfy({ $0.rect.height >= quick.smallestQuickFace(in: image.size) }),
           Self.coveredShare(of: regions) >= Self.quickLookShare,
           let looked = try quick.quickWholeLook(in: image, minimumConfidence: minimumConfidence) {
            found = looked
            quickSearches[part] += 1
            sinceFullSearch[part] += 1
        } else if !fullSearchDue, let regional = detector as? RegionLimitedDetector, let regions {
            found = try regional.detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: smallestHeight,
                                        regions: regions)
            regionSearches[part] += 1
            sinceFullSearch[part] += 1
        } else if !fullSearchDue, let limited = detector as? SizeLimitedDetector, smallestFound[part] != nil {
            found = try limited.detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: smallestHeight)
            sinceFullSearch[part] += 1
        } else if guided, quickSinceFullLook[part] < Self.quickLooksPerFullLook, let quick = detector as? any QuickWholeFaceLook,
                  let looked = try quick.quickWholeLook(in: image, minimumConfidence: minimumConfidence) {
            found = looked
            quickSinceFullLook[part] += 1
            quickSearches[part] += 1
            sinceFullSearch[part] = 0
            fullSearches[part] += 1
        } else {
            found = try detector.detect(in: image, minimumConfidence: minimumConfidence)
            quickSinceFullLook[part] = 0
            sinceFullSearch[part] = 0
            fullSearches[part] += 1
        }
        runs[part] += 1
        return found
    }

    /// For a face part (``SmallestFaceDetector``): the people the other parts found and kept at
    /// their last run who are too short to show a face it finds, grown by a quarter each way
    /// (they walked on since). Where the picture moved because they walked (where they are
    /// and where they were at each round since the face part's last run), the face part need
    /// not look: on vtest.avi at 1280x720 it searched the walkers' paths for about 28 ms every
    /// 8th round, and found nothing there.
    private func facelessBodies(for detector: any Detector, part: Int, in size: ImageSize) -> [UnitRect] {
        guard let faces = detector as? any SmallestFaceDetector else { return [] }
        let tallest = type(of: faces).bodiesWithFacesItFinds * faces.smallestFace(in: size)
        var bodies: [UnitRect] = []
        for other in keptAtLastRun.indices where other != part {
            for found in keptAtLastRun[other] where found.type == .humanBody && found.rect.height < tallest {
                let r = found.rect
                bodies.append(UnitRect(x: r.x - r.width / 4, y: r.y - r.height / 4, width: r.width * 1.5, height: r.height * 1.5))
            }
        }
        return bodies
    }

    /// The picture's cells this round (made once however many parts ask); `nil` when they
    /// cannot be made, and the part searches everything.
    private func cells(of image: Image) -> MotionCells? {
        if let made = cellsThisRound, made.round == rounds { return made.cells }
        let cells = try? MotionCells(of: image, cellSize: motion.cellSize)
        cellsThisRound = (rounds, cells)
        return cells
    }
}
