import DockTrack
import Foundation
import Testing

/// The virtual dock's window, its motors and its zoom, on the simulated clock.
@Suite(.onTestThreads) struct VirtualDockTests {
    static let source = ImageSize(width: 1280, height: 720)

    static func inside(_ crop: PixelRect, _ size: ImageSize = source) -> Bool {
        crop.x >= -1e-6 && crop.y >= -1e-6 && crop.x + crop.width <= Double(size.width) + 1e-6
            && crop.y + crop.height <= Double(size.height) + 1e-6
    }

    @Test func theWidestWindowOfAnAspectFitsTheSourceAndPosesMapBothWays() {
        let portrait = CropWindow(sourceSize: ImageSize(width: 720, height: 528), aspect: 9.0 / 16.0)
        #expect(abs(portrait.widest.width - 297) < 0.01 && portrait.widest.height == 528)
        let wide = CropWindow(sourceSize: ImageSize(width: 720, height: 528), aspect: 21.0 / 9.0)
        #expect(wide.widest.width == 720 && abs(wide.widest.height - 720 * 9 / 21) < 0.01)
        let window = CropWindow(sourceSize: Self.source, aspect: 1, maximumZoom: 3)
        let crop = window.crop(at: DockOrientation(x: 0.05, y: -0.1, z: 0), zoom: 2)
        let pose = window.pose(of: crop)
        #expect(abs(pose.x - 0.05) < 1e-9 && abs(pose.y + 0.1) < 1e-9)
        // A subject's box, in the window and back through the window's own place in the source.
        let face = UnitRect(x: 0.4, y: 0.5, width: 0.05, height: 0.1)
        let seen = window.rect(face, in: crop), whole = window.unitRect(of: crop)
        #expect(abs(whole.x + seen.x * whole.width - face.x) < 1e-9 && abs(whole.y + seen.y * whole.height - face.y) < 1e-9)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e300, -5, 0.5, 1e-300])
    func theWindowNeverLeavesTheSource(value: Double) {
        let window = CropWindow(sourceSize: Self.source, aspect: 9.0 / 16.0, maximumZoom: 4)
        for zoom in [value, 1, 4, 100] {
            let crop = window.crop(at: DockOrientation(x: value, y: value, z: 0), zoom: zoom)
            #expect(Self.inside(crop), "pose \(value), zoom \(zoom): \(crop)")
            #expect(crop.width > 0 && crop.width.isFinite)
        }
        // 1 px and 4000 px sources.
        for size in [ImageSize(width: 1, height: 1), ImageSize(width: 4000, height: 3000)] {
            let crop = CropWindow(sourceSize: size, aspect: value, maximumZoom: value).crop(at: DockOrientation(x: value, y: -value, z: 0), zoom: 2)
            #expect(Self.inside(crop, size), "\(size), \(value): \(crop)")
        }
    }

    @Test func panningToTheEndStopsAtTheSourcesEdgeAndZoomingOutThereStaysInside() throws {
        var dock = VirtualDock(window: CropWindow(sourceSize: Self.source, aspect: 1, maximumZoom: 3), zoom: 3)
        try dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 2, z: 0)), at: 0)
        _ = dock.motion(at: 5)
        #expect(abs(dock.crop.x + dock.crop.width - 1280) < 0.5, "\(dock.crop)")
        dock.zoomTarget = 1
        var time = 5.0
        while time < 12 {
            time += 1.0 / 30
            _ = dock.motion(at: time)
            #expect(Self.inside(dock.crop), "at \(time): \(dock.crop)")
        }
        #expect(abs(dock.zoom - 1) < 0.01 && abs(dock.crop.width - 720) < 1)
    }

    @Test func zoomMovesSmoothlyAndNoFasterThanItsSpeed() {
        var dock = VirtualDock(window: CropWindow(sourceSize: Self.source, aspect: 16.0 / 9.0, maximumZoom: 4))
        dock.zoomTarget = 100
        #expect(dock.zoomTarget == 4)
        var previous = dock.zoom
        for k in 1...300 {
            _ = dock.motion(at: Double(k) / 30)
            let doublings = log2(dock.zoom / previous) * 30
            #expect(doublings <= dock.zoomSpeed + 1e-9 && doublings >= 0)
            previous = dock.zoom
        }
        #expect(dock.zoom > 3.9)
    }

    static func person(_ id: Int, faceAt x: Double, y: Double = 0.6, faceHeight: Double, rank: Int) -> TrackedSubject {
        let face = UnitRect(x: x - faceHeight * 0.3, y: y - faceHeight / 2, width: faceHeight * 0.6, height: faceHeight)
        let body = UnitRect(x: x - faceHeight, y: max(0, y - 3 * faceHeight), width: 2 * faceHeight, height: 3.5 * faceHeight)
        return TrackedSubject(id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", id))!, kind: .person,
                              rect: body.union(face), faceRect: face, saliencyRank: rank)
    }

    @Test func oneSmallFaceIsZoomedInAGroupWiderAndNobodyWidensAfterAWhile() {
        let window = CropWindow(sourceSize: Self.source, aspect: 16.0 / 9.0, maximumZoom: 4)
        var zoom = ZoomFraming()
        let one = zoom.update(subjects: [Self.person(1, faceAt: 0.3, faceHeight: 0.08, rank: 1)], mode: .automatic,
                              window: window, current: 1, now: 0)
        // Head and shoulders: 3.5 face heights in 80% of the window's height.
        #expect(abs(one - 0.8 / (3.5 * 0.08)) < 0.01)
        let group = [Self.person(1, faceAt: 0.3, faceHeight: 0.08, rank: 1), Self.person(2, faceAt: 0.7, faceHeight: 0.08, rank: 2)]
        let both = zoom.update(subjects: group, mode: .automatic, window: window, current: one, now: 1)
        #expect(both < one * 0.6 && both >= 1)
        // The same two in center mode: only the primary is framed.
        var centered = ZoomFraming()
        #expect(abs(centered.update(subjects: group, mode: .center, window: window, current: 1, now: 0) - one) < 0.01)
        // A few percent of change is no reason to move (no breathing).
        let nudged = zoom.update(subjects: group.map { var s = $0; s.faceRect!.height *= 1.05; return s }, mode: .automatic,
                                 window: window, current: both, now: 1.1)
        #expect(nudged == both)
        // Nobody: it holds, then widens.
        #expect(zoom.update(subjects: [], mode: .automatic, window: window, current: both, now: 3) == both)
        #expect(zoom.update(subjects: [], mode: .automatic, window: window, current: both, now: 5.2) == 1)
        // A subject whose box is not a number does not move the zoom anywhere strange.
        var broken = Self.person(3, faceAt: .nan, faceHeight: .nan, rank: 1)
        broken.rect = UnitRect(x: .nan, y: 0, width: .infinity, height: 1)
        let strange = zoom.update(subjects: [broken], mode: .automatic, window: window, current: 1, now: 6)
        #expect(strange >= 1 && strange <= 4)
    }

    /// 60 frames of 1280x720 at 24 fps, one person whose face is at x 0.2 until frame 30 and at 0.8
    /// from then on; the picture changes from dark to light at frame 30 when `cut` (a cut in the
    /// film), and stays dark otherwise (the person walked over in one frame: no cut).
    static func shots(cut: Bool, lookAhead: Int) throws -> [Reframer.Shot] {
        let dark = try Image(pixels: [UInt8](repeating: 30, count: 1280 * 720 * 3), width: 1280, height: 720, channels: 3)
        let light = try Image(pixels: [UInt8](repeating: 220, count: 1280 * 720 * 3), width: 1280, height: 720, channels: 3)
        var reframer = try Reframer(dock: VirtualDock(window: CropWindow(sourceSize: Self.source, aspect: 9.0 / 16.0, maximumZoom: 2)),
                                    framing: FramingController.Params(), zoom: nil, lookAhead: lookAhead)
        var shots: [Reframer.Shot] = []
        for k in 0..<60 {
            var person = Self.person(1, faceAt: k < 30 ? 0.2 : 0.8, faceHeight: 0.1, rank: 1)
            person.isObserved = true
            let frame = Frame(index: k, time: Double(k) / 24, image: cut && k >= 30 ? light : dark)
            if let shot = try reframer.push(frame, subjects: [person]) { shots.append(shot) }
        }
        return shots + reframer.finish()
    }

    @Test func theWindowCutsWithTheFilmAndOnlyThere() throws {
        let window = CropWindow(sourceSize: Self.source, aspect: 9.0 / 16.0, maximumZoom: 2)
        // Pixels the window's centre may move in a frame: 30°/s... the controller's own speed
        // limit (the standard dock's, 3 rad/s) over 70° of 1280 px at 24 fps, with a margin.
        let limit = 3 / window.radiansPerPixel / 24 * 1.01
        for lookAhead in [0, 12] {
            let withCut = try Self.shots(cut: true, lookAhead: lookAhead)
            #expect(withCut.map(\.frame.index) == Array(0..<60))
            let centres = withCut.map { $0.crop.midX / 1280 }
            // Both shots framed from their first frame: the face's centre in the middle of the window.
            #expect(abs(centres[0] - 0.2) < 0.02 && abs(centres[30] - 0.8) < 0.02, "lookAhead \(lookAhead): \(centres[0]), \(centres[30])")
            // No frame before the cut is shown through a window that moved towards the next shot.
            #expect(centres[..<30].allSatisfy { abs($0 - 0.2) < 0.02 }, "lookAhead \(lookAhead): \(centres[..<30])")
            // No cut: the window pans over, within the speed limit.
            let panned = try Self.shots(cut: false, lookAhead: lookAhead).map { $0.crop.midX }
            let steps = zip(panned, panned.dropFirst()).map { abs($1 - $0) }
            #expect(steps.allSatisfy { $0 <= limit }, "lookAhead \(lookAhead): largest step \(steps.max() ?? 0) px, limit \(limit)")
            #expect(panned.last! / 1280 > 0.7, "lookAhead \(lookAhead): the window reached \(panned.last! / 1280)")
        }
    }
}
