import DockTrack
import Testing

@Suite(.onTestThreads) struct GeometryTests {
    let size = ImageSize(width: 200, height: 100)

    @Test func pixelRectNearTheTopBecomesAHighUnitRect() {
        // 20 px from the top of a 100 px tall image: the unit rect's origin is at the lower-left,
        // so its top edge is at y = 0.8 and its bottom at 0.6.
        let rect = UnitRect(PixelRect(x: 50, y: 20, width: 40, height: 20), in: size)
        #expect(rect == UnitRect(x: 0.25, y: 0.6, width: 0.2, height: 0.2))
        #expect(rect.maxY == 0.8)
    }

    @Test func conversionRoundTrips() {
        let pixels = PixelRect(x: 13, y: 7, width: 31, height: 29)
        let back = UnitRect(pixels, in: size).pixelRect(in: size)
        #expect(abs(back.x - 13) < 1e-9 && abs(back.y - 7) < 1e-9)
        #expect(abs(back.width - 31) < 1e-9 && abs(back.height - 29) < 1e-9)
    }

    @Test func boxesReachingPastTheBorderAreClipped() {
        let rect = UnitRect(PixelRect(x: -20, y: 90, width: 40, height: 30), in: size)
        #expect(rect == UnitRect(x: 0, y: 0, width: 0.1, height: 0.1))
    }

    @Test func upperLeftOriginRectsFlipVertically() {
        // A region of interest covering the top quarter (upper-left origin y = 0).
        let roi = UnitRect(upperLeftOrigin: UnitRect(x: 0.1, y: 0, width: 0.5, height: 0.25))
        #expect(roi == UnitRect(x: 0.1, y: 0.75, width: 0.5, height: 0.25))
    }

    @Test func intersectionOverUnion() {
        let a = UnitRect(x: 0, y: 0, width: 0.5, height: 0.5)
        #expect(a.intersectionOverUnion(a) == 1)
        #expect(a.intersectionOverUnion(UnitRect(x: 0.5, y: 0.5, width: 0.2, height: 0.2)) == 0)
        let half = a.intersectionOverUnion(UnitRect(x: 0.25, y: 0, width: 0.5, height: 0.5))
        #expect(abs(half - 1.0 / 3.0) < 1e-12)
    }

    @Test func fittingKeepsAspectRatio() {
        #expect(ImageSize(width: 1280, height: 720).fitting(maxWidth: 640) == ImageSize(width: 640, height: 360))
        #expect(ImageSize(width: 320, height: 240).fitting(maxWidth: 640) == ImageSize(width: 320, height: 240))
    }

    @Test func suppressionKeepsTheMostConfidentOfOverlappingBoxesPerType() {
        let face = UnitRect(x: 0.4, y: 0.4, width: 0.2, height: 0.2)
        let shifted = UnitRect(x: 0.42, y: 0.41, width: 0.2, height: 0.2)
        let result = [
            Observation(type: .humanFace, rect: face, confidence: 0.7),
            Observation(type: .humanFace, rect: shifted, confidence: 0.9),
            Observation(type: .humanBody, rect: face, confidence: 0.6),
        ].suppressingOverlaps()
        #expect(result.map(\.confidence) == [0.9, 0.6])
        #expect(result.map(\.type) == [.humanFace, .humanBody])
    }

    @Test func frameSelection() {
        let selection = FrameSelection(start: 10, end: 20, stride: 3)
        #expect((0..<25).filter(selection.includes) == [10, 13, 16, 19])
        #expect(!selection.isFinished(at: 19) && selection.isFinished(at: 20))
    }
}
