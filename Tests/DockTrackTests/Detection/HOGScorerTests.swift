import DockTrack
import Foundation
import Testing

/// DockTrack's HOG window scorer against HOGDescriptor's own: the same people, the same boxes,
/// the same margins but for float rounding, in whole searches and region searches, for both
/// windows, on real frames of several sizes.
@Suite(.onTestThreads) struct HOGScorerTests {
    static func detectors(_ params: HOGPeopleDetector.Params) throws -> (ours: HOGPeopleDetector, openCV: HOGPeopleDetector) {
        var reference = params
        reference.scoring = .openCV
        #expect(params.scoring == .separableSums)
        return (try HOGPeopleDetector(params: params), try HOGPeopleDetector(params: reference))
    }

    /// Every box either finds (confidence from 0 up, so the weak ones count too), in a fixed order.
    /// The order is total (confidence last): HOGDescriptor searches its levels on parallel threads,
    /// so two boxes with the same place and size come in the order the threads finished.
    static func boxes(_ detector: HOGPeopleDetector, _ image: Image, regions: [UnitRect]? = nil) throws -> [Observation] {
        try detector.detect(in: image, minimumConfidence: 0, smallestHeight: 0, regions: regions)
            .sorted {
                ($0.rect.x, $0.rect.y, $0.rect.width, $0.rect.height, $0.confidence)
                    < ($1.rect.x, $1.rect.y, $1.rect.width, $1.rect.height, $1.confidence)
            }
    }

    static func expectSame(_ ours: [Observation], _ openCV: [Observation], _ what: String) {
        #expect(ours.count == openCV.count, "\(what): \(ours.count) boxes against OpenCV's \(openCV.count)")
        for (a, b) in zip(ours, openCV) {
            #expect(a.rect == b.rect, "\(what): \(a.rect) against \(b.rect)")
            // A confidence of 0.5 +- 1e-4 is a margin +- 1e-4 / 4 * 4 = 1e-4: far above rounding,
            // far below a margin that matters.
            #expect(abs(a.confidence - b.confidence) < 1e-4, "\(what): \(a.confidence) against \(b.confidence)")
        }
    }

    @Test(arguments: ["hog-body-fast", "hog-body"])
    func theScorerFindsWhatHOGDescriptorFinds(name: String) throws {
        let params = name == "hog-body-fast" ? HOGPeopleDetector.Params.fast : HOGPeopleDetector.Params()
        let (ours, openCV) = try Self.detectors(params)
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        let regions = [UnitRect(x: 0.05, y: 0.3, width: 0.2, height: 0.3), UnitRect(x: 0.55, y: 0.1, width: 0.3, height: 0.4)]
        var people = 0
        for index in [0, 250, 500, 794] {
            let frame = frames[index].image
            // vtest.avi's own 768x576 (enlarged for the search), 1280x720 (shrunk) and an odd
            // size that no stride divides.
            for size in [frame.size, ImageSize(width: 1280, height: 720), ImageSize(width: 333, height: 251)] {
                let image = size == frame.size ? frame : try frame.resized(to: size)
                let whole = try Self.boxes(ours, image)
                Self.expectSame(whole, try Self.boxes(openCV, image), "frame \(index) at \(size), whole")
                Self.expectSame(try Self.boxes(ours, image, regions: regions), try Self.boxes(openCV, image, regions: regions),
                                "frame \(index) at \(size), regions")
                people += whole.filter { $0.confidence >= 0.5 }.count
            }
        }
        // Not a comparison of two empty lists: the frames are full of pedestrians.
        #expect(people >= 20, "\(people) people found")
    }

    /// A close-up (Megamind's cartoon face, where HOG finds shoulders if anything) and a
    /// picture barely a window large.
    @Test func closeUpsAndTinyPictures() throws {
        let (ours, openCV) = try Self.detectors(.fast)
        var source = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        let frame = try #require(try source.nextFrame()).image
        Self.expectSame(try Self.boxes(ours, frame), try Self.boxes(openCV, frame), "Megamind")
        let tiny = try frame.resized(to: ImageSize(width: 60, height: 120))
        Self.expectSame(try Self.boxes(ours, tiny), try Self.boxes(openCV, tiny), "60x120")
    }
}
