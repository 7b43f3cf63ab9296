import Foundation
import DockTrackCore
import DockTrackMedia
import CDockCV

/// SSDLite-MobileNetV2 trained for one class, person (`models/ssdlite_mobilenet_v2_people.pb`
/// and its text graph): it tells a person from the things HOG's windows mistake for one (window
/// frames, ladders, fences, a bus roof, dogs, lines of large text), and it is the `ssd-body`
/// detector on its own.
///
/// As a check of candidate boxes (``scores(for:in:)``) it looks at a square of ``Params/context``
/// times each box's longer side around it, at ``Params/inputSize`` px: the person then fills most
/// of what it sees, whatever their size in the frame, so a small input is enough (128 px: 10 to
/// 16 ms for one crop on one core; the crops of one round go through in one batch).
package final class PersonNetwork {
    package struct Params: Sendable, Equatable {
        /// The side (px) each candidate's crop is resized to. On HOG's boxes of bikes.mp4 (523, one
        /// cyclist) and vtest.avi (842 in 200 frames), a person score of 0.4 kept 2 and 715 at 128
        /// px; 12 and 735 at 160, for 1.4 times the time.
        package var inputSize = 128
        /// The crop's side as a multiple of the candidate's longer side: the person with some of
        /// what surrounds them, as the network saw people in training.
        package var context = 1.5
        /// A person the network finds in the crop must overlap the candidate this much
        /// (intersection over union) to speak for it.
        package var minimumOverlap = 0.3
        /// The input side when it looks at the whole frame (`ssd-body`), as it was trained.
        package var wholeFrameInputSize = 300
        package init() {}
    }

    package let params: Params
    private let net: OpaquePointer

    /// The network's two files in `models`: the frozen graph and the text graph OpenCV reads with it.
    package static func modelFiles(in models: ModelStore) -> (graph: String, textGraph: String) {
        (models.model("ssdlite_mobilenet_v2_people.pb"), models.model("ssdlite_mobilenet_v2_people.pbtxt"))
    }

    package init(models: ModelStore, params: Params = Params()) throws(DetectorError) {
        let (graph, textGraph) = Self.modelFiles(in: models)
        guard ModelStore.fileExists(textGraph) else { throw .modelMissing(path: textGraph, hint: models.modelsHint) }
        net = try loadModel(graph, hint: models.modelsHint) { dcv_person_net_open(graph, textGraph, $0) }
        self.params = params
    }

    deinit { dcv_person_net_destroy(net) }

    /// For each of `boxes` (unit coordinates, lower-left origin), how sure the network is that a
    /// person stands there, 0...1 (0: it found nobody overlapping the box).
    package func scores(for boxes: [UnitRect], in image: Image) throws(DetectorError) -> [Double] {
        guard !boxes.isEmpty else { return [] }
        let size = image.size
        var corners: [Float] = []
        corners.reserveCapacity(4 * boxes.count)
        for box in boxes {
            let pixels = box.pixelRect(in: size)
            corners += [Float(pixels.x), Float(pixels.y), Float(pixels.width), Float(pixels.height)]
        }
        var scores = [Float](repeating: 0, count: boxes.count)
        var status = dcv_status()
        let result = scores.withUnsafeMutableBufferPointer { scores in
            dcv_person_net_score(net, image.handle, corners, Int32(boxes.count), Int32(params.inputSize), Float(params.context),
                                 Float(params.minimumOverlap), scores.baseAddress, &status)
        }
        if result < 0 { throw .failed(detector: "person-check", reason: OpenCVError(status).message) }
        return scores.map(Double.init)
    }

    /// The people in the whole of `image`, as bodies.
    func people(in image: Image, minimumConfidence: Double, detector: String) throws(DetectorError) -> [Observation] {
        let size = image.size
        let boxes = try detectBoxes(detector) { out, capacity, status in
            dcv_person_net_detect(net, image.handle, Int32(params.wholeFrameInputSize), Float(minimumConfidence), out, capacity, status)
        }
        return boxes.map { Observation(type: .humanBody, rect: $0.unitRect(in: size).clippedToUnit(), confidence: Double($0.score)) }
            .filter { $0.rect.width > 0 && $0.rect.height > 0 }
            .suppressingOverlaps()
    }
}

/// `ssd-body`: the person network over the whole frame at 300x300. Finds people that fill a good
/// part of the frame at 25 to 50 ms a frame on two cores; small people in a large frame are lost in
/// the squashed input (on vtest.avi's first frame it finds 2 of its 8 walkers).
package final class SSDPeopleDetector: Detector {
    package let name = "ssd-body"
    package let network: PersonNetwork

    package init(models: ModelStore, params: PersonNetwork.Params = .init()) throws(DetectorError) {
        network = try PersonNetwork(models: models, params: params)
    }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        try network.people(in: image, minimumConfidence: minimumConfidence, detector: name)
    }
}

/// Bodies another detector proposes (HOG, which finds people as small as a tenth of the frame
/// but also window frames, ladders, fences and dogs), kept only when ``PersonNetwork`` confirms a
/// person in each. A verdict is remembered where it was given, so that a person followed from
/// round to round is checked once, and a window frame that never moves costs one check every
/// ``Params/rejectionKeptFor`` rounds: on a still camera the network runs only for what is new.
/// At most ``Params/checksPerRound`` new boxes are checked in one round, largest first; the rest
/// wait for the next round (they are not reported before they are confirmed).
///
/// On bikes.mp4 (a street from a bus, one cyclist on a few frames) `track` with the default
/// detector reported 4.19 subjects a frame with HOG's boxes as they come, 0.12 with this (the
/// cyclist's face); on vtest.avi the labelled walks stay 17 tracked, 0 identity changes, at 100
/// checks of about 13 ms in 795 frames. A confirmation kept 40 rounds instead of 16 took 62 checks
/// but let a box between two crossing walkers pass as one of them (one identity change).
package final class ConfirmedBodyDetector: RegionLimitedDetector {
    package struct Params: Sendable, Equatable {
        /// The person network's score a body needs (0...1).
        package var minimumPersonScore = 0.4
        /// New boxes checked in one round at most (one batch through the network).
        package var checksPerRound = 4
        /// A box is the same person as one confirmed in the last rounds (each taken by one box a
        /// round), and confirmed without a new check, when its centre is within this fraction of
        /// that box's width sideways and height up or down, and its height within this fraction of
        /// that box's: a walker moves about half their width between rounds four frames apart
        /// (vtest.avi at 10 fps), so overlap alone would check them again and again. vtest.avi's
        /// 795 frames: 49 checks at 1.0, 100 at 0.75, 256 by overlap (0.3); walks 17/0 each.
        package var sameConfirmedShift = 1.0
        /// A box overlapping a rejected one by this much is the same thing, rejected again
        /// without a check (tighter than for people: someone stepping in front of a window
        /// frame is a new box).
        package var sameRejectedOverlap = 0.5
        /// Rounds a confirmation holds; then the box is checked again.
        package var confirmationKeptFor = 16
        /// Rounds a rejection holds, seen again or not; then the place is checked again (a
        /// person may have stepped where the ladder was).
        package var rejectionKeptFor = 16
        package init() {}
    }

    /// A verdict of the network, where it was given.
    struct Verdict {
        var rect: UnitRect
        let isPerson: Bool
        var givenAt: Int
        var proposedAt: Int
        /// Where the box was when the verdict was given (or last renewed).
        var givenWhere: UnitRect
    }

    package let base: any RegionLimitedDetector
    package let network: PersonNetwork
    package let params: Params
    private var verdicts: [Verdict] = []
    private var round = 0
    /// Boxes the network looked at so far, and how many it confirmed (for the bench and tests).
    package private(set) var checks = 0
    package private(set) var confirmed = 0

    package init(_ base: any RegionLimitedDetector, network: PersonNetwork, params: Params = Params()) {
        self.base = base
        self.network = network
        self.params = params
    }


    package var name: String { "confirmed-body" }
    /// Each body is the person network's.
    package var checksWhatItFinds: Bool { true }

    package func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double, regions: [UnitRect]?) throws(DetectorError) -> [Observation] {
        let proposed = try base.detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: smallestHeight, regions: regions)
        round += 1
        // A verdict holds for a while from when it was given, then the place is checked again:
        // a person may have stepped where the ladder was, and a box once taken for a person
        // (white cabinets on a wall, proposed in every round) is not one for good.
        // A person who walked since the verdict (their box moved by half its width or more) is
        // one still and is not checked again; what stands still is (the cabinets). While the
        // camera turns everything moves in the picture, and is checked again once it stops. On
        // vtest.avi's first 300 frames: 52 checks rather than 76, `bench` 250 -> 285 fps.
        for i in verdicts.indices where verdicts[i].isPerson && Self.walked(from: verdicts[i].givenWhere, to: verdicts[i].rect) {
            verdicts[i].givenAt = round - 1
            verdicts[i].givenWhere = verdicts[i].rect
        }
        verdicts.removeAll { verdict in
            round - verdict.givenAt > (verdict.isPerson ? params.confirmationKeptFor : params.rejectionKeptFor)
        }
        var kept: [Observation] = []
        var unknown: [Observation] = []
        for observation in proposed {
            guard observation.type == .humanBody else {
                kept.append(observation)
                continue
            }
            if let i = bestVerdict(for: observation.rect) {
                verdicts[i].proposedAt = round
                if verdicts[i].isPerson {
                    verdicts[i].rect = observation.rect
                    kept.append(observation)
                }
            } else {
                unknown.append(observation)
            }
        }
        let checked = unknown.sorted { $0.rect.area > $1.rect.area }.prefix(max(0, params.checksPerRound))
        let scores = try network.scores(for: checked.map(\.rect), in: image)
        checks += checked.count
        for (observation, score) in zip(checked, scores) {
            let isPerson = score >= params.minimumPersonScore
            verdicts.append(Verdict(rect: observation.rect, isPerson: isPerson, givenAt: round, proposedAt: round, givenWhere: observation.rect))
            if isPerson {
                confirmed += 1
                kept.append(observation)
            }
        }
        return kept
    }

    /// Whether a box moved from `then` to `now` by half its width or more.
    static func walked(from then: UnitRect, to now: UnitRect) -> Bool {
        hypot(now.midX - then.midX, now.midY - then.midY) >= 0.5 * max(then.width, 1e-6)
    }

    /// The remembered verdict on the place of `rect`: the nearest confirmed person there, else
    /// the rejection it overlaps most.
    private func bestVerdict(for rect: UnitRect) -> Int? {
        var person: (index: Int, distance: Double)?
        var rejection: (index: Int, overlap: Double)?
        for (i, verdict) in verdicts.enumerated() {
            if verdict.isPerson {
                // One box a round per person: a second box beside them is checked on its own.
                guard verdict.proposedAt < round else { continue }
                let was = verdict.rect, shift = params.sameConfirmedShift
                let dx = abs(rect.midX - was.midX) / max(was.width, 1e-6), dy = abs(rect.midY - was.midY) / max(was.height, 1e-6)
                let grown = abs(rect.height - was.height) / max(was.height, 1e-6)
                guard dx <= shift, dy <= shift, grown <= shift else { continue }
                if person.map({ dx + dy < $0.distance }) ?? true { person = (i, dx + dy) }
            } else {
                let overlap = verdict.rect.intersectionOverUnion(rect)
                guard overlap >= params.sameRejectedOverlap else { continue }
                if rejection.map({ overlap > $0.overlap }) ?? true { rejection = (i, overlap) }
            }
        }
        return person?.index ?? rejection?.index
    }
}

