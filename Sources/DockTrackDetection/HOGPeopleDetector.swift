import DockTrackCore
import DockTrackMedia
import CDockCV
import Foundation

/// Whole standing people with OpenCV's HOG descriptor and its default linear SVM (Dalal and
/// Triggs, 64x128 window): finds people too far away for their faces to be seen.
package final class HOGPeopleDetector: RegionLimitedDetector {
    /// Which trained window: Dalal and Triggs' 64x128 (INRIA people), or Daimler's 48x96
    /// (pedestrians, smaller: about 2.7 times cheaper on vtest.avi, since it needs no upscaling).
    package enum Model: String, Sendable, Equatable {
        case dalalTriggs, daimler

        /// The height (px) of a person the window fits.
        var personHeight: Double { self == .daimler ? 72 : 96 }
        /// The detection window (px): nothing smaller can be looked at.
        var window: ImageSize { self == .daimler ? ImageSize(width: 48, height: 96) : ImageSize(width: 64, height: 128) }
        /// The SVM margin at which the confidence is 0.5.
        var marginMidpoint: Double { self == .daimler ? 1.0 : 0.5 }
    }

    /// How a window's SVM margin is computed. Both take HOGDescriptor's gradient and sum the
    /// same block histograms; the margins differ by float rounding only (about 1e-6).
    package enum WindowScoring: Sendable, Equatable {
        /// DockTrack's scorer (`hog_scorer.hpp`): each block's histograms summed along its rows,
        /// then down its columns, each row's sums shared by the two blocks that overlap there.
        /// A 1067x600 level costs 4.9 ms against HOGDescriptor's 11.7 (vtest.avi at 1280x720:
        /// the whole pipeline 240 -> 305 fps).
        case separableSums
        /// `cv::HOGDescriptor::detect` and `detectMultiScale` themselves: the reference.
        case openCV
    }

    package struct Params: Sendable, Equatable {
        package var model = Model.dalalTriggs
        /// The shortest person to find, as a fraction of the image height. The image is scaled
        /// so that such a person is 96 px tall, the size the 64x128 window was trained on
        /// (0.12 finds the pedestrians of vtest.avi, 70 px tall in 576 rows, at scale 1.4).
        package var minimumRelativeHeight = 0.12
        /// The scaled image is never wider than this (bounds the cost on large frames).
        package var maximumWorkingWidth = 1280
        /// Nor enlarged more than this (a 176x144 clip is not worth a 1000 px search).
        package var maximumUpscale = 1.5
        /// Window stride in pixels (8 is OpenCV's sample; 4 is slower and finds a bit more).
        package var windowStride = 8
        /// Pyramid scale step. 1.1 halves the work of OpenCV's sample value 1.05 and found the
        /// same labelled pedestrians of vtest.avi.
        package var scale = 1.1
        /// Who scores the windows: DockTrack's scorer (the default) or HOGDescriptor itself.
        package var scoring = WindowScoring.separableSums
        /// People shorter than ``minimumRelativeHeight``, from this fraction of the height up,
        /// looked for in a pass of their own: the picture enlarged for them and only the
        /// pyramid's first levels searched, up to where the main search begins. The main
        /// search's levels stay where they are, so what it finds and groups (a dense group, a
        /// walk) does not move, as it does when the whole pyramid starts lower. `nil`: no
        /// such pass.
        package var smallPeopleFrom: Double?
        package init() {}

        /// `hog-body-fast`: the Daimler window, which needs no upscaling for 70 px people, at
        /// pyramid steps of 1.2 (half the work of 1.1; on vtest.avi the same labelled pedestrians
        /// are found, `DetectorTests.peopleAreFoundInVtestFrames`), and smaller people from
        /// 0.085 of the height in a pass of their own (49 px of 576 rows; vtest.avi's people
        /// from 50 px, tracked: found on 0.891 of their frames rather than 0.737).
        package static var fast: Params {
            var params = Params()
            params.model = .daimler
            params.scale = 1.2
            params.smallPeopleFrom = 0.085
            return params
        }
    }

    /// The size the detector runs at for an image of `size`, looking for people of
    /// `smallestHeight` of its height and taller (never below ``Params/minimumRelativeHeight``).
    package func workingSize(for size: ImageSize, smallestHeight: Double = 0) -> ImageSize {
        guard size.height > 0, size.width > 0 else { return size }
        let smallest = max(params.minimumRelativeHeight, smallestHeight.isFinite ? min(smallestHeight, 1) : 0)
        return scaled(size, by: enlargement(of: size, smallest: smallest))
    }

    /// How much an image of `size` is scaled for people `smallest` of its height to fill the
    /// window (within ``Params/maximumUpscale`` and ``Params/maximumWorkingWidth``).
    private func enlargement(of size: ImageSize, smallest: Double) -> Double {
        min(params.model.personHeight / (smallest * Double(size.height)), params.maximumUpscale,
            Double(params.maximumWorkingWidth) / Double(size.width))
    }

    private func scaled(_ size: ImageSize, by factor: Double) -> ImageSize {
        ImageSize(width: Int((Double(size.width) * factor).rounded()), height: Int((Double(size.height) * factor).rounded()))
    }

    /// The small people's pass for an image of `size` whose main search runs at `work`.
    package struct SmallPeoplePass: Sendable, Equatable {
        /// The enlarged picture it searches, and how many of its pyramid's levels.
        package var work: ImageSize
        package var levels: Int
        /// Whether the level after its last is the main search's first (the picture enlarged
        /// by a whole number of pyramid steps): that level is then searched once for both.
        package var sharesMainLevel: Bool
    }

    /// The small people's pass for an image of `size` whose main search runs at `work`: the
    /// picture enlarged by as many pyramid steps as reach from the main search's smallest
    /// person down to ``Params/smallPeopleFrom`` (or to `smallestHeight`, when the caller looks
    /// for taller people only); `nil` when there is no such pass or nothing between.
    package func smallPeoplePass(for size: ImageSize, mainWork work: ImageSize, smallestHeight: Double = 0) -> SmallPeoplePass? {
        guard let from = params.smallPeopleFrom, from.isFinite, from > 0, size.height > 0, size.width > 0, work.height > 0 else { return nil }
        let smallest = max(from, smallestHeight.isFinite ? smallestHeight : 0)
        // The shortest person (fraction of the height) the main search finds at its first level.
        let smallestThere = params.model.personHeight / Double(work.height)
        guard smallest < smallestThere / params.scale.squareRoot() else { return nil }
        let steps = Int((log(smallestThere / smallest) / log(params.scale)).rounded(.up))
        let mainFactor = Double(work.height) / Double(size.height)
        let wanted = mainFactor * pow(params.scale, Double(steps))
        let window = params.model.window
        if wanted <= enlargement(of: size, smallest: 0) {
            let small = scaled(size, by: wanted)
            guard small.width >= window.width, small.height >= window.height else { return nil }
            return SmallPeoplePass(work: small, levels: steps, sharesMainLevel: true)
        }
        // Enlarged as far as allowed, which falls between the main search's levels. One level
        // more than reaches the main search's first: a person at the border between the two
        // searches is then found at their own size by both, rather than as their legs by the
        // small pass's largest window (which split vtest.avi's walkers side by side into
        // pieces, and their identities with them).
        let factor = enlargement(of: size, smallest: 0)
        let smallestHere = params.model.personHeight / (factor * Double(size.height))
        guard smallestHere < smallestThere / params.scale.squareRoot() else { return nil }
        let small = scaled(size, by: factor)
        guard small.width >= window.width, small.height >= window.height else { return nil }
        return SmallPeoplePass(work: small, levels: 1 + Int((log(smallestThere / smallestHere) / log(params.scale)).rounded(.up)),
                               sharesMainLevel: false)
    }

    package var name: String { params.model == .daimler ? "hog-body-fast" : "hog-body" }
    package let params: Params
    private let hog: OpaquePointer

    package init(params: Params = Params()) throws(DetectorError) {
        var status = dcv_status()
        guard let hog = params.model == .daimler ? dcv_hog_create_daimler(&status) : dcv_hog_create_people(&status) else {
            throw .failed(detector: params.model == .daimler ? "hog-body-fast" : "hog-body", reason: OpenCVError(status).message)
        }
        dcv_hog_set_opencv_scoring(hog, params.scoring == .openCV ? 1 : 0)
        self.hog = hog
        self.params = params
    }

    deinit { dcv_hog_destroy(hog) }

    /// Maps the SVM margin onto 0...1: a logistic curve with 0.5 at a margin of 0.5, where
    /// OpenCV's default people detector stops producing mostly false hits.
    static func confidence(margin: Float, midpoint: Double = 0.5) -> Double {
        1 / (1 + exp(-4 * (Double(margin) - midpoint)))
    }

    /// The smallest frame the window fits in once enlarged as far as allowed.
    package var minimumFrameSize: ImageSize { minimumFrameSize(for: ImageSize(width: 1, height: 1)) }

    /// The same for a frame of `size`: a very wide frame is shrunk to the working width, so it
    /// needs more rows; a very tall one is shrunk until its shortest person is the window's
    /// height, so it needs more columns (a 49x4000 frame: 320).
    func minimumFrameSize(for size: ImageSize) -> ImageSize {
        let window = params.model.window
        let byWidth = min(params.maximumUpscale, Double(params.maximumWorkingWidth) / Double(max(1, size.width)))
        let byHeight = min(params.maximumUpscale, params.model.personHeight / (params.minimumRelativeHeight * Double(max(1, size.height))))
        return ImageSize(width: Int((Double(window.width) / byHeight).rounded(.up)),
                         height: Int((Double(window.height) / byWidth).rounded(.up)))
    }

    /// People from `smallestHeight` of the image's height up (the image is shrunk further
    /// first), near `regions` when given: the windows searched there are the whole search's, at
    /// the same levels and places, so each scores as it would there.
    package func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double, regions: [UnitRect]?) throws(DetectorError) -> [Observation] {
        let window = params.model.window
        var work = workingSize(for: image.size, smallestHeight: smallestHeight)
        // Shrunk below the window for such tall people: the whole search instead.
        if work.width < window.width || work.height < window.height { work = workingSize(for: image.size) }
        guard work.width >= window.width, work.height >= window.height else {
            throw .frameTooSmall(detector: name, size: image.size, minimum: minimumFrameSize(for: image.size))
        }
        guard let small = smallPeoplePass(for: image.size, mainWork: work, smallestHeight: smallestHeight) else {
            return try search(image, at: work, levels: 0, regions: regions, minimumConfidence: minimumConfidence)
        }
        guard small.sharesMainLevel else {
            let tall = try search(image, at: work, levels: 0, regions: regions, minimumConfidence: minimumConfidence)
            let short = try search(image, at: small.work, levels: small.levels, regions: regions, minimumConfidence: minimumConfidence)
            return Self.merged(tall: tall, short: short)
        }
        let areas = regions.flatMap { Self.searchAreas(around: $0, in: work, window: window) }
        let smallAreas = regions.flatMap { Self.searchAreas(around: $0, in: small.work, window: window) }
        // One of the two covers most of its picture: both search all of theirs.
        guard (areas == nil) == (smallAreas == nil) else {
            return try bothSearches(image, at: work, small: small, areas: nil, smallAreas: nil, minimumConfidence: minimumConfidence)
        }
        if areas?.isEmpty == true || smallAreas?.isEmpty == true { return [] }
        return try bothSearches(image, at: work, small: small, areas: areas, smallAreas: smallAreas, minimumConfidence: minimumConfidence)
    }

    /// The main search at `work` and the small people's pass in one call, the level they share
    /// searched once (`dcv_hog_detect_with_smaller`).
    private func bothSearches(_ image: Image, at work: ImageSize, small: SmallPeoplePass, areas: [SearchArea]?, smallAreas: [SearchArea]?,
                              minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let picture = try prepared(image, at: work)
        let enlarged = try prepared(image, at: small.work)
        let corners = areas.map(Self.corners)
        let smallCorners = smallAreas.map(Self.corners)
        var tallBoxes = [dcv_box](repeating: dcv_box(), count: detectionCapacity)
        var tallCount: Int32 = 0
        let shortBoxes = try detectBoxes(name) { out, capacity, status in
            tallBoxes.withUnsafeMutableBufferPointer { tallOut in
                withOptionalPointer(corners) { regions in
                    withOptionalPointer(smallCorners) { smallRegions in
                        dcv_hog_detect_with_smaller(hog, picture.handle, enlarged.handle, Int32(small.levels),
                                                    regions, Int32(areas?.count ?? 0), smallRegions, Int32(smallAreas?.count ?? 0),
                                                    0, Int32(params.windowStride), params.scale,
                                                    tallOut.baseAddress, Int32(detectionCapacity), &tallCount, out, capacity, status)
                    }
                }
            }
        }
        let tall = observations(Array(tallBoxes.prefix(Int(tallCount))), in: work, minimumConfidence: minimumConfidence)
        let short = observations(shortBoxes, in: small.work, minimumConfidence: minimumConfidence)
        return Self.merged(tall: tall, short: short)
    }

    /// The people in `image` searched at the working size `work` (the first `levels` levels
    /// of the pyramid when above 0), near `regions` when given.
    private func search(_ image: Image, at work: ImageSize, levels: Int, regions: [UnitRect]?, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let window = params.model.window
        let areas = regions.flatMap { Self.searchAreas(around: $0, in: work, window: window) }
        if areas?.isEmpty == true { return [] }
        let picture = try prepared(image, at: work)
        let boxes: [dcv_box]
        if let areas {
            let corners = Self.corners(areas)
            boxes = try detectBoxes(name) { out, capacity, status in
                dcv_hog_detect_regions(hog, picture.handle, corners, Int32(areas.count), 0, Int32(params.windowStride), params.scale,
                                       Int32(levels), out, capacity, status)
            }
        } else {
            boxes = try detectBoxes(name) { out, capacity, status in
                dcv_hog_detect(hog, picture.handle, 0, Int32(params.windowStride), params.scale, Int32(levels), out, capacity, status)
            }
        }
        return observations(boxes, in: work, minimumConfidence: minimumConfidence)
    }

    /// The picture HOG looks at for `image` at the working size `work`.
    private func prepared(_ image: Image, at work: ImageSize) throws(DetectorError) -> Image {
        // Daimler's window was trained on gray pictures (the Daimler mono pedestrian set): it
        // looks at one channel, a sixth less work than the strongest of three (vtest.avi's
        // labelled walks at every 4, 5, 6 and 8 frames summed: 59 tracked, 4 changes either way).
        // A frame it shrinks is made gray first and shrunk bilinearly, as HOG shrinks its own
        // levels: 0.6 ms rather than 4.4 for area averaging three channels at 1280x720, which
        // was an eighth of the search. A frame it enlarges (vtest.avi's own 768x576) is enlarged
        // and then made gray: gray first moved a marginal window there and split a labelled walk.
        try preparing(name) { () throws(OpenCVError) in
            params.model != .daimler ? try image.resized(to: work)
                : work.width < image.size.width ? try image.gray(equalized: false).resized(to: work, interpolation: .bilinearExact)
                : try image.resized(to: work).gray(equalized: false)
        }
    }

    /// HOG's boxes on a picture of `size` as bodies, tightened to the person.
    private func observations(_ boxes: [dcv_box], in size: ImageSize, minimumConfidence: Double) -> [Observation] {
        boxes.compactMap { box in
            let confidence = Self.confidence(margin: box.score, midpoint: params.model.marginMidpoint)
            guard confidence >= minimumConfidence else { return nil }
            return Observation(type: .humanBody, rect: Self.tightened(box.unitRect(in: size)), confidence: confidence)
        }.suppressingOverlaps()
    }

    /// Search areas as the shim takes them: x, y, width, height each.
    private static func corners(_ areas: [SearchArea]) -> [Int32] {
        areas.flatMap { [Int32($0.x), Int32($0.y), Int32($0.width), Int32($0.height)] }
    }

    /// The main search's people and the small people's pass together, one box a person:
    /// - a tall box over two or more short boxes, each shorter than it, is a pair walking side
    ///   by side that the main search's larger windows see as one (vtest.avi's two walkers at
    ///   the top right, in a box twice their height): the short ones stand for it;
    /// - a short box partly on a box at least 1.2 times its height (sharing 0.3 to 0.8 of
    ///   itself) is a piece of that person, their legs and hips, or a window between two
    ///   people walking together: dropped;
    /// - a short box inside a tall box that stands is that person found again at a smaller
    ///   size: the tall box is kept, however sure the short one is.
    /// Tracked over vtest.avi (`make metrics`, `eval --clip`): letting the surer box win
    /// instead swapped the identities of the two walkers side by side (2 changes on the
    /// labelled walks); pieces taken from 1.3 times the height rather than 1.2 (1.1 to 1.2 gave
    /// the same) left 0.14 false people a frame rather than 0.09.
    package static func merged(tall: [Observation], short: [Observation]) -> [Observation] {
        var kept: [Observation] = []
        for box in tall {
            var inside = 0
            for small in short where small.rect.height < 0.9 * box.rect.height && box.rect.intersectionOverSmaller(small.rect) > 0.8 {
                inside += 1
            }
            if inside < 2 { kept.append(box) }
        }
        let standing = kept
        for small in short where !tall.contains(where: { isPiece(small.rect, of: $0.rect) })
            && !standing.contains(where: { $0.rect.intersectionOverSmaller(small.rect) > 0.8 }) {
            kept.append(small)
        }
        return kept.suppressingOverlaps()
    }

    /// Whether `small` is a piece of the taller `box`: it lies partly on it, partly beside it.
    static func isPiece(_ small: UnitRect, of box: UnitRect) -> Bool {
        let shared = box.intersectionOverSmaller(small)
        return shared > 0.3 && shared <= 0.8 && box.height > 1.2 * small.height
    }

    /// How far a region is grown on each side to search, in windows: a window that shows a
    /// person inside the region (the person in its middle 60% of width, 78% of height) starts
    /// less than that far away. vtest.avi's labelled walks at detection every 4, 5, 6 and 8
    /// frames, summed: 59 tracked and 3 identity changes at 0.75 and at 1 (59 and 4 searching
    /// everything), 62 and 6 at 0.5; `track samples/vtest.avi` took 2.95 s at 0.75, 3.48 s at 1
    /// and 4.29 s searching everything.
    static let regionMargin = 0.75

    /// Where to run the window for people overlapping `regions` in a working picture of `size`:
    /// each region grown by ``regionMargin`` windows on every side, at least a window large;
    /// `nil` (the whole picture) when that covers more than 80% of it.
    static func searchAreas(around regions: [UnitRect], in size: ImageSize, window: ImageSize) -> [SearchArea]? {
        SearchArea.around(regions, in: size, minimum: window, maximumShare: 0.8) { _ in
            (regionMargin * Double(window.width), regionMargin * Double(window.height))
        }
    }

    /// A person fills about the middle 60% of the 64x128 window's width and 78% of its
    /// height; this removes the margin so the box hugs the body.
    static func tightened(_ rect: UnitRect) -> UnitRect {
        let dx = rect.width * 0.2, dy = rect.height * 0.11
        return UnitRect(x: rect.x + dx, y: rect.y + dy, width: rect.width - 2 * dx, height: rect.height - 2 * dy)
    }
}

/// `body` with a pointer to `values`' elements, or with `nil` when there are none.
private func withOptionalPointer<R>(_ values: [Int32]?, _ body: (UnsafePointer<Int32>?) -> R) -> R {
    guard let values else { return body(nil) }
    return values.withUnsafeBufferPointer { body($0.baseAddress) }
}
