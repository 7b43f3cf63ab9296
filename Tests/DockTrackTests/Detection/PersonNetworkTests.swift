import DockTrack
import Foundation
import Testing

/// `yolox-body`, YOLOX-nano on the inference engine, and its 8-bit form `yolox-body-int8`, on the
/// labelled clips: the walkers of vtest where they are labelled, at 768x576 and at 360x270 (people
/// 14 to 57 px tall), nobody on the dogs, and pictures of any size.
@Suite(.onTestThreads) struct PersonNetworkTests {
    /// The labelled people of `frame` (from 0) that a box of `found` overlaps by 0.5, over those
    /// considered and at least `tallest` px tall.
    static func matched(_ found: [Observation], labels: LabelledVideo, frame: Int, size: ImageSize, tallest: Double) -> (Int, Int) {
        let people = (labels.people[frame] ?? []).filter { $0.height >= tallest }
        let boxes = found.filter { $0.type == .humanBody }.map { $0.rect.pixelRect(in: size) }
        let hits = people.filter { person in
            boxes.contains { box in UnitRect(box, in: size).intersectionOverUnion(UnitRect(person, in: size)) >= 0.5 }
        }
        return (hits.count, people.count)
    }

    static let networks = ["yolox-body", "yolox-body-int8"]

    @Test(arguments: networks, [("vtest.avi", "vtest.mot.txt", 40.0), ("vtest-small.mp4", "vtest-small.mot.txt", 20.0)])
    func theWalkersAreFoundWhereTheyAreLabelled(network: String, clip: (name: String, labels: String, tallest: Double)) throws {
        let (clip, labels, tallest) = clip
        let labelled = try LabelledVideo.read(mot: Fixtures.sample("labels/\(labels)"))
        let detector = try DetectorCatalog.make(network, models: Fixtures.models)
        var source = try MediaFile.open(Fixtures.sample(clip))
        var hits = 0, people = 0, frames = 0
        try FrameSelection(start: 0, end: 300, stride: 30).forEachFrame(of: &source) { frame in
            let found = try detector.detect(in: frame.image, minimumConfidence: 0.5)
            #expect(found.allSatisfy { $0.type == .humanBody && $0.confidence >= 0.6 && $0.rect.clippedToUnit() == $0.rect })
            let (hit, count) = Self.matched(found, labels: labelled, frame: frame.index, size: frame.image.size, tallest: tallest)
            hits += hit
            people += count
            frames += 1
        }
        #expect(frames == 10)
        #expect(people >= 50)
        #expect(Double(hits) >= 0.85 * Double(people), "\(network) on \(clip): \(hits) of \(people) labelled people boxed")
    }

    @Test(arguments: networks)
    func nobodyOnTheDogsAndPicturesOfAnySize(network: String) throws {
        let detector = try DetectorCatalog.make(network, models: Fixtures.models)
        #expect(try detector.detect(in: Image(contentsOf: Fixtures.sample("faces/dogs.jpg")), minimumConfidence: 0.5).isEmpty)
        // A 4000 px wide picture (messi5.jpg in its top-left corner), one of 16 px and one of 1 px.
        let messi = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let wide = try Image.composed(size: ImageSize(width: 4000, height: 3000), placing: [(messi, PixelPoint(x: 0, y: 0))])
        let found = try detector.detect(in: wide, minimumConfidence: 0.5)
        #expect(found.allSatisfy { $0.rect.maxX <= 0.2 && $0.rect.minY >= 0.85 }, "only where messi5.jpg is: \(found)")
        let small = try Image(pixels: [UInt8](repeating: 128, count: 16 * 16 * 3), width: 16, height: 16, channels: 3)
        #expect(try detector.detect(in: small, minimumConfidence: 0.5).isEmpty)
        let tiny = try Image(pixels: [128, 128, 128], width: 1, height: 1, channels: 3)
        #expect(throws: DetectorError.self) { try detector.detect(in: tiny, minimumConfidence: 0.5) }
    }

    /// The network takes the picture's shape: 16:9 squeezed by 4% into 416x224, 4:3 padded from
    /// 312 to 320 rows, never a 416x416 square.
    @Test func theInputFollowsThePicturesShape() throws {
        let detector = try YOLOXPersonDetector(models: Fixtures.models)
        let wide = detector.inputGeometry(for: ImageSize(width: 1280, height: 720))
        #expect(wide.input == ImageSize(width: 416, height: 224) && wide.content == wide.input)
        let standard = detector.inputGeometry(for: ImageSize(width: 768, height: 576))
        #expect(standard.input == ImageSize(width: 416, height: 320) && standard.content == ImageSize(width: 416, height: 312))
        let tall = detector.inputGeometry(for: ImageSize(width: 720, height: 1280))
        #expect(tall.input == ImageSize(width: 224, height: 416))
        let strip = detector.inputGeometry(for: ImageSize(width: 4000, height: 16))
        #expect(strip.input.width == 416 && strip.input.height == 32 && strip.content.height <= 32)
    }
}
