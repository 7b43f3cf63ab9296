import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// Searching where the picture moved: the moving cells, the body detector's region search on
/// vtest.avi, and the schedule that uses them.
@Suite(.onTestThreads) struct MotionRegionTests {
    /// 10 x 8 cells of gray 100, with `changes` (column, row, new value).
    static func cells(_ changes: [(Int, Int, UInt8)] = [], columns: Int = 10, rows: Int = 8) -> MotionCells {
        var values = [UInt8](repeating: 100, count: columns * rows)
        for (column, row, value) in changes { values[row * columns + column] = value }
        return MotionCells(columns: columns, rows: rows, values: values)
    }

    static func close(_ a: UnitRect, _ b: UnitRect) -> Bool {
        abs(a.x - b.x) < 1e-9 && abs(a.y - b.y) < 1e-9 && abs(a.width - b.width) < 1e-9 && abs(a.height - b.height) < 1e-9
    }

    @Test func theMovingCellsAreGrownByACellAndJoinedIntoRectangles() throws {
        // A block at columns 2-3, rows 1-2 (top-left origin), one cell at (8, 6), and a cell
        // that changed by the threshold exactly (not moving).
        let now = Self.cells([(2, 1, 140), (3, 1, 140), (2, 2, 60), (3, 2, 140), (8, 6, 200), (5, 6, 115)])
        let regions = try #require(MotionRegions.regions(from: Self.cells(), to: now))
        #expect(regions.count == 2, "\(regions)")
        // Grown: columns 1-4, rows 0-3 -> x 0.1, width 0.4; top 0, height 0.5 (lower-left y 0.5).
        #expect(regions.contains { Self.close($0, UnitRect(x: 0.1, y: 0.5, width: 0.4, height: 0.5)) }, "\(regions)")
        // Columns 7-9, rows 5-7: the bottom-right corner.
        #expect(regions.contains { Self.close($0, UnitRect(x: 0.7, y: 0, width: 0.3, height: 0.375)) }, "\(regions)")
    }

    @Test func aStillPictureHasNoRegionsAndAMovingOneIsSearchedWhole() {
        #expect(MotionRegions.regions(from: Self.cells(), to: Self.cells()) == [])
        // A turning camera, a cut, the light: more than half the cells moved.
        let everything = (0..<10).flatMap { c in (0..<5).map { r in (c, r, UInt8(180)) } }
        #expect(MotionRegions.regions(from: Self.cells(), to: Self.cells(everything)) == nil)
        // Another size of picture (a stream that came back at another resolution).
        #expect(MotionRegions.regions(from: Self.cells(), to: Self.cells(columns: 12, rows: 8)) == nil)
    }

    @Test func cellsOfFramesLargeAndTiny() throws {
        let frame = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))[100]
        let cells = try MotionCells(of: frame.image, cellSize: 8)
        #expect(cells.columns == 96 && cells.rows == 72)
        // The same frame has not moved; a white one has, everywhere.
        #expect(MotionRegions.regions(from: cells, to: try MotionCells(of: frame.image, cellSize: 8)) == [])
        let white = try Image.filling(size: frame.size, channels: 3) { $0.initializeMemory(as: UInt8.self, repeating: 255); return true }!
        #expect(MotionRegions.regions(from: cells, to: try MotionCells(of: white, cellSize: 8)) == nil)
        // One pixel is one cell; so is a picture smaller than a cell.
        let dot = try Image(pixels: [10, 20, 30], width: 1, height: 1, channels: 3)
        let one = try MotionCells(of: dot, cellSize: 8)
        #expect(one.columns == 1 && one.rows == 1)
    }

    /// A region search by `detector` in `image`: around what the whole search found, the same
    /// boxes (IoU over `overlap`); with no region, nothing; around the first thing found alone,
    /// that thing. Gives what the whole search found and what the search around the first found.
    static func searchAround(_ detector: some RegionLimitedDetector, in image: Image, overlap: Double,
                             _ what: String) throws -> (whole: [Observation], alone: [Observation]) {
        let whole = try detector.detect(in: image, minimumConfidence: 0.5, smallestHeight: 0)
        #expect(whole.count >= 3, "\(what): \(whole.count) found")
        let near = try detector.detect(in: image, minimumConfidence: 0.5, smallestHeight: 0, regions: whole.map(\.rect))
        for thing in whole {
            let best = near.map { $0.rect.intersectionOverUnion(thing.rect) }.max() ?? 0
            #expect(best > overlap, "\(what): \(thing.rect) found again at IoU \(best)")
        }
        #expect(try detector.detect(in: image, minimumConfidence: 0.5, smallestHeight: 0, regions: []).isEmpty)
        guard let one = whole.first?.rect else { return (whole, []) }
        let alone = try detector.detect(in: image, minimumConfidence: 0.5, smallestHeight: 0, regions: [one])
        #expect(alone.contains { $0.rect.intersectionOverUnion(one) > overlap })
        return (whole, alone)
    }

    /// The region search looks at the whole search's windows: around the people the whole
    /// search found, it finds the same boxes; nowhere, nothing.
    @Test func aRegionSearchFindsWhatTheWholeSearchFindsThere() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        let hog = try HOGPeopleDetector(params: .fast)
        for index in [100, 400] {
            let image = frames[index].image
            let (whole, alone) = try Self.searchAround(hog, in: image, overlap: 0.9, "frame \(index)")
            // One person's region: that person, and nobody far from them.
            let one = try #require(whole.first).rect
            #expect(alone.allSatisfy { abs($0.rect.midX - one.midX) < 0.25 }, "\(alone.map(\.rect)) around \(one)")
            // A region that is no number: the whole search.
            let nan = UnitRect(x: .nan, y: 0, width: 0.1, height: 0.1)
            #expect(try hog.detect(in: image, minimumConfidence: 0.5, smallestHeight: 0, regions: [nan]).count == whole.count)
        }
    }

    /// MTCNN around regions: the faces of a group photo found again around where the whole
    /// search found them, none away from them, none with no region.
    @Test func aFaceRegionSearchFindsTheFacesThere() throws {
        let mtcnn = try MTCNNFaceDetector(models: Fixtures.models)
        let image = try Image(contentsOf: Fixtures.sample("faces/2008_002470.jpg"))
        let (whole, alone) = try Self.searchAround(mtcnn, in: image, overlap: 0.7, "faces")
        #expect(alone.count < whole.count, "one face's region: \(alone.count) of \(whole.count) faces")
    }

    /// Faces cut by the picture's edge: MTCNN's box for such a face can reach past the edge; the
    /// box reported stops at it, in a whole search and in a search around a region at the edge.
    @Test func facesCutByTheEdgeAreBoxedInsideThePicture() throws {
        let mtcnn = try MTCNNFaceDetector(models: Fixtures.models)
        let image = try Image(contentsOf: Fixtures.sample("faces/2008_002470.jpg"))
        let size = image.size
        let faces = try mtcnn.detect(in: image, minimumConfidence: 0.5, smallestHeight: 0)
        #expect(faces.count >= 3)
        var atTheEdge = 0
        for face in faces {
            let box = face.rect.pixelRect(in: size)
            // The picture from the face's middle rightwards (its left half cut off), and from
            // a third of the way down it (its top cut off).
            for cut in [PixelRect(x: box.midX.rounded(), y: 0, width: Double(size.width) - box.midX.rounded(), height: Double(size.height)),
                        PixelRect(x: 0, y: (box.y + box.height / 3).rounded(), width: Double(size.width),
                                  height: Double(size.height) - (box.y + box.height / 3).rounded())] {
                let part = try image.cropped(to: cut, size: ImageSize(width: Int(cut.width), height: Int(cut.height)))
                // (unit rectangles have their origin at the lower left: the top edge is y 0.95 to 1)
                let edge = cut.x > 0 ? UnitRect(x: 0, y: 0, width: 0.05, height: 1) : UnitRect(x: 0, y: 0.95, width: 1, height: 0.05)
                for regions in [nil, [edge]] {
                    for found in try mtcnn.detect(in: part, minimumConfidence: 0.5, smallestHeight: 0, regions: regions) {
                        let r = found.rect
                        #expect(r.x >= 0 && r.y >= 0 && r.x + r.width <= 1 + 1e-9 && r.y + r.height <= 1 + 1e-9,
                                "\(r) in a \(part.size) cut of \(size)")
                        if r.x < 0.002 || r.y < 0.002 || r.x + r.width > 0.998 || r.y + r.height > 0.998 { atTheEdge += 1 }
                    }
                }
            }
        }
        // Not a check of nothing: faces were found against the edge.
        #expect(atTheEdge >= 2, "\(atTheEdge) faces against the edge")
    }

    /// A part that found nothing looks only where the picture moved too: on a still picture it
    /// does not search at all between its full searches.
    @Test func anIdlePartLooksOnlyWhereThePictureMoved() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        let hog = try HOGPeopleDetector(params: .fast)
        let schedule = IdlePartSchedule(hog, fullSearchInterval: 8)
        let white = try Image.filling(size: frames[0].size, channels: 3) { $0.initializeMemory(as: UInt8.self, repeating: 255); return true }!
        for _ in 0..<4 { #expect(try schedule.detect(in: white, minimumConfidence: 0.5).isEmpty) }
        #expect(schedule.fullSearches == [1] && schedule.regionSearches == [3])
        // People walk into the picture (it moved nearly everywhere): the whole of it is searched.
        #expect(try schedule.detect(in: frames[100].image, minimumConfidence: 0.5).count >= 3)
        #expect(schedule.fullSearches == [2] && schedule.regionSearches == [3], "\(schedule.fullSearches) \(schedule.regionSearches)")
    }

    /// Between full searches the body part looks where vtest.avi moved and around the people it
    /// found, and keeps finding the walkers; a picture that changed everywhere is searched whole.
    @Test func betweenFullSearchesTheBodyPartLooksWhereThePictureMoved() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        let hog = try HOGPeopleDetector(params: .fast)
        let schedule = IdlePartSchedule(CombinedDetector([try HOGPeopleDetector(params: .fast)]), fullSearchInterval: 8)
        var counts: [(scheduled: Int, whole: Int)] = []
        for index in stride(from: 100, to: 128, by: 4) {
            let found = try schedule.detect(in: frames[index].image, minimumConfidence: 0.5)
            let whole = try hog.detect(in: frames[index].image, minimumConfidence: 0.5)
            counts.append((found.count, whole.count))
        }
        #expect(schedule.fullSearches == [1] && schedule.regionSearches == [6], "\(schedule.fullSearches) \(schedule.regionSearches)")
        #expect(counts.allSatisfy { $0.scheduled >= $0.whole - 1 }, "\(counts)")
        // A white picture: everything moved, so the whole of it is searched.
        let white = try Image.filling(size: frames[0].size, channels: 3) { $0.initializeMemory(as: UInt8.self, repeating: 255); return true }!
        _ = try schedule.detect(in: white, minimumConfidence: 0.5)
        #expect(schedule.regionSearches == [6] && schedule.runs == [8])
    }

    @Test func cellsWhoseMotionIsExplainedAreLeftOut() throws {
        // The block at columns 2-3, row 1 (top-left origin) and one cell at (8, 6).
        let now = Self.cells([(2, 1, 140), (3, 1, 140), (8, 6, 200)])
        let block = UnitRect(upperLeftOrigin: UnitRect(x: 0.2, y: 0.125, width: 0.2, height: 0.125))
        let regions = try #require(MotionRegions.regions(from: Self.cells(), to: now, explained: [block]))
        #expect(regions.count == 1 && Self.close(regions[0], UnitRect(x: 0.7, y: 0, width: 0.3, height: 0.375)), "\(regions)")
        #expect(MotionRegions.regions(from: Self.cells(), to: now, explained: [UnitRect(x: 0, y: 0, width: 1, height: 1)]) == [])
        // A rectangle that is no number explains nothing; one past the picture only its part inside.
        #expect(MotionRegions.regions(from: Self.cells(), to: now, explained: [UnitRect(x: .nan, y: 0, width: 1, height: 1)])?.count == 2)
        #expect(MotionRegions.regions(from: Self.cells(), to: now, explained: [UnitRect(x: -5, y: 0.5, width: 5.5, height: 5)])?.count == 1)
        // Explained or not, what moved counts toward the share: a turning camera is searched whole.
        let everything = (0..<10).flatMap { c in (0..<5).map { r in (c, r, UInt8(180)) } }
        #expect(MotionRegions.regions(from: Self.cells(), to: Self.cells(everything), explained: [UnitRect(x: 0, y: 0, width: 1, height: 1)]) == nil)
    }

    /// MTCNN that notes the regions it was asked to search.
    class NotingFaces: RegionLimitedDetector, @unchecked Sendable {
        let mtcnn: MTCNNFaceDetector
        var asked: [[UnitRect]] = []
        var name: String { mtcnn.name }
        init() throws { mtcnn = try MTCNNFaceDetector(models: Fixtures.models) }
        func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double, regions: [UnitRect]?) throws(DetectorError) -> [Observation] {
            if let regions { asked.append(regions) }
            return try mtcnn.detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: smallestHeight, regions: regions)
        }
    }

    /// The same, saying its smallest face: the schedule then leaves out the walkers too short to
    /// show one.
    final class NotingSmallestFaces: NotingFaces, SmallestFaceDetector, @unchecked Sendable {
        func smallestFace(in size: ImageSize) -> Double { mtcnn.smallestFace(in: size) }
    }

    /// vtest.avi's walkers are about 70 px tall, their faces under MTCNN's 20 px: where the
    /// picture moved because they walked, the idle face part does not look, and it finds no more
    /// or fewer faces for it.
    @Test func theFacePartDoesNotSearchWhereOnlyPeopleTooSmallForAFaceWalked() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        func searched(_ faces: NotingFaces) throws -> (area: Double, faces: Int) {
            let schedule = IdlePartSchedule(CombinedDetector([faces, try HOGPeopleDetector(params: .fast)]))
            var found = 0
            for index in stride(from: 100, to: 260, by: 4) {
                found += try schedule.detect(in: frames[index].image, minimumConfidence: 0.5).filter { $0.type == .humanFace }.count
            }
            let area = faces.asked.reduce(0) { $0 + $1.reduce(0) { $0 + $1.clippedToUnit().width * $1.clippedToUnit().height } }
            return (area, found)
        }
        let all = try searched(try NotingFaces()), some = try searched(try NotingSmallestFaces())
        print(String(format: "face part's region searches over vtest.avi 100-260: %.2f pictures in all, %.2f leaving out the walkers", all.area, some.area))
        #expect(all.area > 0.5, "the walkers' paths: \(all.area) pictures searched in all")
        #expect(some.area < all.area / 3, "\(some.area) of \(all.area)")
        #expect(some.faces == all.faces)
    }

    /// MTCNN guided by the person network: of its whole-picture searches, three in four are
    /// its quick look (BlazeFace on the engine, faces checked by O-Net: about 3 ms against
    /// about 80 for the cascade over 1280x720), one in four the whole cascade (the small faces
    /// whose person the network missed). Here with a full search due every fourth run (the
    /// schedule's own: every 32nd), over 40 rounds of vtest.avi.
    @Test func mostWholePictureFaceSearchesAreTheQuickLook() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        let schedule = IdlePartSchedule(CombinedDetector([try MTCNNFaceDetector(models: Fixtures.models), try YOLOXPersonDetector(models: Fixtures.models)]),
                                        maximumInterval: 1, fullSearchInterval: 1)
        for index in stride(from: 0, to: 160, by: 4) { _ = try schedule.detect(in: frames[index].image, minimumConfidence: 0.5) }
        let (quick, whole) = (schedule.quickSearches[0], schedule.fullSearches[0] - schedule.quickSearches[0])
        print("face part over 40 rounds: \(schedule.runs[0]) runs, \(quick) quick whole-picture looks, \(whole) whole cascades, \(schedule.regionSearches[0]) region searches")
        #expect(quick >= 6 && whole >= 1 && whole <= quick / 3 + 1, "\(quick) quick looks, \(whole) whole cascades")
    }

    /// Megamind's close-up at 1280x720: the areas around the face and the body below it are
    /// large, and there the quick look takes the place of the cascade's region searches (63 of
    /// 66 runs measured; the face part 1.37 -> 0.68 ms a frame in bench), finding a face on
    /// nearly as many rounds as the cascade (64 against 66 measured: the tracker's re-detection
    /// carries a face over a round it is missed).
    @Test func aroundACloseUpTheQuickLookTakesThePlaceOfTheRegionSearches() throws {
        var source = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        var pictures: [Image] = []
        var index = 0
        while let frame = try source.nextFrame() {
            if index % 4 == 0 { pictures.append(try frame.image.resized(to: ImageSize(width: 1280, height: 720))) }
            index += 1
        }
        func rounds(quickLook: Bool) throws -> (schedule: IdlePartSchedule, withFace: Int) {
            var params = MTCNNFaceDetector.Params()
            params.quickLook = quickLook
            let schedule = IdlePartSchedule(CombinedDetector([try MTCNNFaceDetector(models: Fixtures.models, params: params),
                                                              try YOLOXPersonDetector(models: Fixtures.models)]))
            var withFace = 0
            for picture in pictures where try schedule.detect(in: picture, minimumConfidence: 0.5).contains(where: { $0.type == .humanFace }) {
                withFace += 1
            }
            return (schedule, withFace)
        }
        let (quick, quickFaces) = try rounds(quickLook: true), (cascade, cascadeFaces) = try rounds(quickLook: false)
        print("Megamind's face part: quick looks \(quick.quickSearches[0]) and region searches \(quick.regionSearches[0]) of \(quick.runs[0]) runs, "
              + "a face on \(quickFaces) rounds; the cascade alone: \(cascade.regionSearches[0]) region searches, a face on \(cascadeFaces) rounds")
        #expect(quick.quickSearches[0] >= quick.runs[0] * 3 / 4, "\(quick.quickSearches[0]) quick looks of \(quick.runs[0]) runs")
        #expect(cascade.quickSearches[0] == 0 && cascade.regionSearches[0] >= cascade.runs[0] / 2)
        #expect(quickFaces * 100 >= cascadeFaces * 95, "a face on \(quickFaces) rounds with the quick look, \(cascadeFaces) without")
    }
}
