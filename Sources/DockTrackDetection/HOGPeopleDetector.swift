import DockTrackCore
import DockTrackMedia
import CDockCV
import Foundation

/// Whole standing people with OpenCV's HOG descriptor and its default linear SVM (Dalal and
/// Triggs, 64x128 window): finds people too far away for their faces to be seen.
public final class HOGPeopleDetector: RegionLimitedDetector {
    /// Which trained window: Dalal and Triggs' 64x128 (INRIA people), or Daimler's 48x96
    /// (pedestrians, smaller: about 2.7 times cheaper on vtest.avi, since it needs no upscaling).
    public enum Model: String, Sendable, Equatable {
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
    public enum WindowScoring: Sendable, Equatable {
        /// DockTrack's scorer (`hog_scorer.hpp`): each block's histograms summed along its rows,
        /// then down its columns, each row's sums shared by the two blocks that overlap there.
        /// A 1067x600 level costs 4.9 ms against HOGDescriptor's 11.7 (vtest.avi at 1280x720:
        /// the whole pipeline 240 -> 305 fps).
        case separableSums
        /// `cv::HOGDescriptor::detect` and `detectMultiScale` themselves: the reference.
        case openCV
    }

    public struct Params: Sendable, Equatable {
        public var model = Model.dalalTriggs
        /// The shortest person to find, as a fraction of the image height. The image is scaled
        /// so that such a person is 96 px tall, the size the 64x128 window was trained on
        /// (0.12 finds the pedestrians of vtest.avi, 70 px tall in 576 rows, at scale 1.4).
        public var minimumRelativeHeight = 0.12
        /// The scaled image is never wider than this (bounds the cost on large frames).
        public var maximumWorkingWidth = 1280
        /// Nor enlarged more than this (a 176x144 clip is not worth a 1000 px search).
        public var maximumUpscale = 1.5
        /// Window stride in pixels (8 is OpenCV's sample; 4 is slower and finds a bit more).
        public var windowStride = 8
        /// Pyramid scale step. 1.1 halves the work of OpenCV's sample value 1.05 and found the
        /// same labelled pedestrians of vtest.avi.
        public var scale = 1.1
        /// Who scores the windows: DockTrack's scorer (the default) or HOGDescriptor itself.
        public var scoring = WindowScoring.separableSums
        public init() {}

        /// `hog-body-fast`: the Daimler window, which needs no upscaling for 70 px people, at
        /// pyramid steps of 1.2 (half the work of 1.1; on vtest.avi the same labelled pedestrians
        /// are found, `DetectorTests.peopleAreFoundInVtestFrames`).
        public static var fast: Params {
            var params = Params()
            params.model = .daimler
            params.scale = 1.2
            return params
        }
    }

    /// The size the detector runs at for an image of `size`, looking for people of
    /// `smallestHeight` of its height and taller (never below ``Params/minimumRelativeHeight``).
    public func workingSize(for size: ImageSize, smallestHeight: Double = 0) -> ImageSize {
        guard size.height > 0, size.width > 0 else { return size }
        let smallest = max(params.minimumRelativeHeight, smallestHeight.isFinite ? min(smallestHeight, 1) : 0)
        var factor = params.model.personHeight / (smallest * Double(size.height))
        factor = min(factor, params.maximumUpscale, Double(params.maximumWorkingWidth) / Double(size.width))
        return ImageSize(width: Int((Double(size.width) * factor).rounded()), height: Int((Double(size.height) * factor).rounded()))
    }

    public var name: String { params.model == .daimler ? "hog-body-fast" : "hog-body" }
    public let params: Params
    private let hog: OpaquePointer

    public init(params: Params = Params()) throws(DetectorError) {
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
    public var minimumFrameSize: ImageSize { minimumFrameSize(for: ImageSize(width: 1, height: 1)) }

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
    public func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double, regions: [UnitRect]?) throws(DetectorError) -> [Observation] {
        let window = params.model.window
        var work = workingSize(for: image.size, smallestHeight: smallestHeight)
        // Shrunk below the window for such tall people: the whole search instead.
        if work.width < window.width || work.height < window.height { work = workingSize(for: image.size) }
        guard work.width >= window.width, work.height >= window.height else {
            throw .frameTooSmall(detector: name, size: image.size, minimum: minimumFrameSize(for: image.size))
        }
        let areas = regions.flatMap { Self.searchAreas(around: $0, in: work, window: window) }
        if areas?.isEmpty == true { return [] }
        // Daimler's window was trained on gray pictures (the Daimler mono pedestrian set): it
        // looks at one channel, a sixth less work than the strongest of three (vtest.avi's
        // labelled walks at every 4, 5, 6 and 8 frames summed: 59 tracked, 4 changes either way).
        // A frame it shrinks is made gray first and shrunk bilinearly, as HOG shrinks its own
        // levels: 0.6 ms rather than 4.4 for area averaging three channels at 1280x720, which
        // was an eighth of the search. A frame it enlarges (vtest.avi's own 768x576) is enlarged
        // and then made gray: gray first moved a marginal window there and split a labelled walk.
        let picture = try preparing(name) { () throws(OpenCVError) in
            params.model != .daimler ? try image.resized(to: work)
                : work.width < image.size.width ? try image.gray(equalized: false).resized(to: work, interpolation: .bilinearExact)
                : try image.resized(to: work).gray(equalized: false)
        }
        let boxes: [dcv_box]
        if let areas {
            let corners = areas.flatMap { [Int32($0.x), Int32($0.y), Int32($0.width), Int32($0.height)] }
            boxes = try detectBoxes(name) { out, capacity, status in
                dcv_hog_detect_regions(hog, picture.handle, corners, Int32(areas.count), 0, Int32(params.windowStride), params.scale,
                                       out, capacity, status)
            }
        } else {
            boxes = try detectBoxes(name) { out, capacity, status in
                dcv_hog_detect(hog, picture.handle, 0, Int32(params.windowStride), params.scale, out, capacity, status)
            }
        }
        return boxes.compactMap { box in
            let confidence = Self.confidence(margin: box.score, midpoint: params.model.marginMidpoint)
            guard confidence >= minimumConfidence else { return nil }
            return Observation(type: .humanBody, rect: Self.tightened(box.unitRect(in: work)), confidence: confidence)
        }.suppressingOverlaps()
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
