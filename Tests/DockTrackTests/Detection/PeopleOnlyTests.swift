import DockTrack
import Foundation
import Testing

/// People only where people are: the person network, the confirmed bodies of the default, the
/// ranking that puts faces first, and the clip evaluation that counts false people.
@Suite(.onTestThreads) struct PeopleOnlyTests {
    @Test func thePersonNetworkTellsAPlayerFromDogs() throws {
        let network = try PersonNetwork(models: Fixtures.models)
        // messi5.jpg: the player stands between x 81 and 445, y 65 and 326 (pixels, top-left).
        let messi = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        let player = UnitRect(PixelRect(x: 81, y: 65, width: 364, height: 261), in: messi.size)
        let dogs = try Image(contentsOf: Fixtures.sample("faces/dogs.jpg"))
        // The box HOG puts on the dogs' photo, and a box on each dog photo's quarter.
        let dogBoxes = [UnitRect(x: 0.0176, y: 0.4191, width: 0.0529, height: 0.1352),
                        UnitRect(x: 0.05, y: 0.55, width: 0.4, height: 0.4), UnitRect(x: 0.55, y: 0.55, width: 0.4, height: 0.4),
                        UnitRect(x: 0.05, y: 0.05, width: 0.4, height: 0.4), UnitRect(x: 0.55, y: 0.05, width: 0.4, height: 0.4)]
        let playerScore = try #require(try network.scores(for: [player], in: messi).first)
        let dogScores = try network.scores(for: dogBoxes, in: dogs)
        #expect(playerScore > 0.8, "player \(playerScore)")
        #expect(dogScores.allSatisfy { $0 < 0.4 }, "dogs \(dogScores)")
        // Boxes outside the picture, of no size or of a pixel are looked at without harm.
        let odd = [UnitRect(x: 2, y: 2, width: 0.1, height: 0.1), UnitRect(x: 0.5, y: 0.5, width: 0, height: 0),
                   UnitRect(x: 0.5, y: 0.5, width: 1e-4, height: 1e-4)]
        #expect(try network.scores(for: odd, in: messi).count == 3)
        #expect(try network.scores(for: [], in: messi).isEmpty)
    }

    @Test func theDefaultFindsNoBodyOrFaceOnDogs() throws {
        let detector = try DetectorCatalog.make("default", models: Fixtures.models)
        let found = try detector.detect(in: try Image(contentsOf: Fixtures.sample("faces/dogs.jpg")), minimumConfidence: 0.5)
        #expect(found.isEmpty, "\(found)")
        // HOG alone boxes something on it: the check is what removes it.
        let hog = try DetectorCatalog.make("hog-body-fast", models: Fixtures.models)
        #expect(!(try hog.detect(in: try Image(contentsOf: Fixtures.sample("faces/dogs.jpg")), minimumConfidence: 0.5)).isEmpty)
    }

    @Test func confirmedBodiesKeepVtestsWalkersAndCheckEachOnce() throws {
        let detector = try #require(try DetectorCatalog.make("confirmed-body", models: Fixtures.models) as? ConfirmedBodyDetector)
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        var bodies = 0, proposed = 0
        let hog = try DetectorCatalog.make("hog-body-fast", models: Fixtures.models)
        for index in 0..<40 {
            guard let frame = try source.nextFrame() else { break }
            guard index % 4 == 0 else { continue }
            bodies += try detector.detect(in: frame.image, minimumConfidence: 0.5).count
            proposed += try hog.detect(in: frame.image, minimumConfidence: 0.5).count
        }
        // Most of the walkers HOG finds are kept, and a walker followed round to round is not
        // checked again: fewer checks than boxes proposed.
        #expect(Double(bodies) >= 0.7 * Double(proposed), "kept \(bodies) of \(proposed)")
        #expect(detector.checks < proposed / 2, "checks \(detector.checks) for \(proposed) boxes")
    }

    @Test func aFaceOutranksALargerFacelessBody() {
        var ranker = SaliencyRanker()
        let body = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.3, y: 0.1, width: 0.3, height: 0.7), timeInView: 5)
        let face = UnitRect(x: 0.75, y: 0.6, width: 0.08, height: 0.1)
        let person = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.7, y: 0.2, width: 0.18, height: 0.5), faceRect: face, timeInView: 5)
        var subjects = [body, person]
        ranker.rank(&subjects)
        #expect(subjects.first { $0.id == person.id }?.saliencyRank == 1)
    }

    @Test func motLabelsAreReadAndBadLinesNamed() throws {
        let labels = try LabelledVideo.read(mot: Fixtures.sample("labels/bikes.mot.txt"))
        #expect(labels.people.keys.min() == 30 && labels.people[30]?.count == 1)
        #expect(labels.ignored[186] != nil && labels.people[186] == nil)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("docktrack-bad-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        for bad in ["1,1,10,10,0,20", "0,1,1,1,5,5", "x,1,1,1,5,5", "1,1,nan,1,5,5", "1,1,1,1,5"] {
            try bad.write(to: file, atomically: true, encoding: .utf8)
            #expect(throws: FrameSourceError.self, "\(bad)") { try LabelledVideo.read(mot: file.path) }
        }
    }

    @Test func aSubjectOnNobodyIsAFalsePerson() {
        var score = PeopleScore()
        let size = ImageSize(width: 100, height: 100)
        let person = PixelRect(x: 10, y: 10, width: 20, height: 60)
        // A face inside the person's box (lower-left origin: near the top of the picture) is them.
        let face = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.15, y: 0.75, width: 0.1, height: 0.1), saliencyRank: 2)
        let window = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0.6, y: 0.3, width: 0.3, height: 0.5), saliencyRank: 1)
        score.add(reported: [face, window], labelled: [person], size: size)
        score.add(reported: [], labelled: [], size: size)
        #expect(score.foundPeople == 1 && score.falsePeople == 1)
        #expect(score.falsePeoplePerFrame == 0.5 && score.recall == 1)
        #expect(score.rankOneOnPerson == 0)
        // A clip with nobody labelled: recall is not a number to boast of.
        var nobody = PeopleScore()
        nobody.add(reported: [window], labelled: [], size: size)
        #expect(nobody.recall == nil && nobody.falsePeople == 1 && nobody.jsonLine.contains(#""recall":null"#), "\(nobody.jsonLine)")
    }

    /// `clip` tracked as `track` does (the default detector every 4th frame), its first `frames`
    /// frames scored against the people labelled in `labels`.
    static func trackedPeople(_ clip: String, labels: String, frames: Int = .max, followsCameraMotion: Bool = true,
                              reidentification: Bool = true) throws -> PeopleScore {
        let labels = try LabelledVideo.read(mot: Fixtures.sample(labels))
        var source = try MediaFile.open(Fixtures.sample(clip))
        let pipeline = try TrackingPipeline.overFile(detector: try DetectorCatalog.make("default", models: Fixtures.models),
                                                     models: Fixtures.models, detectEvery: 4, minimumConfidence: 0.5,
                                                     followsCameraMotion: followsCameraMotion, reidentification: reidentification)
        var score = PeopleScore()
        var index = 0
        while index < frames, let frame = try source.nextFrame() {
            score.add(reported: try pipeline.process(frame), labelled: labels.people[index] ?? [], ignored: labels.ignored[index] ?? [],
                      identities: labels.identities[index] ?? [], size: frame.image.size)
            index += 1
        }
        return score
    }

    /// bikes.mp4, tracked as `track` does: a street from a bus, two people on a few frames. The
    /// default reported 4.2 subjects a frame before the check (3.7 on nobody); now 0.028 false
    /// people a frame, the two found on 0.946 of their frames (this test passed on one found).
    @Test func bikesHasAlmostNoFalsePeople() throws {
        let score = try Self.trackedPeople("bikes.mp4", labels: "labels/bikes.mot.txt")
        #expect(score.frames == 250)
        #expect(score.falsePeoplePerFrame <= 0.05, "\(score.jsonLine)")
        #expect((score.recall ?? 0) >= 0.9, "the two men found on most of their frames: \(score.jsonLine)")
    }

    /// vtest.avi's first 300 frames, every person labelled, tracked as `track` does: people from
    /// 50 px tall found on 0.925 of their frames, 0.103 false people a frame (0.737 and 0.520
    /// before the small people's pass and reporting bodies at their first sighting).
    @Test func vtestsSmallPeopleAreFoundAndFewFalse() throws {
        let score = try Self.trackedPeople("vtest.avi", labels: "labels/vtest.mot.txt", frames: 300)
        #expect(score.frames == 300)
        #expect((score.recallOfTallPeople ?? 0) >= 0.9, "\(score.jsonLine)")
        #expect(score.falsePeoplePerFrame <= 0.2, "\(score.jsonLine)")
    }

    /// A camera that moves: vtest.avi through a window panning up to 6% of its width a frame
    /// (samples/vtest-panning.mp4). Boxes that follow the picture's motion stay on their people;
    /// predicted in picture coordinates, they were left beside them (0.70 false people a frame
    /// against 0.13, people found on 0.62 of their frames against 0.78, in one run).
    @Test func aPanningCameraBreedsNoGhosts() throws {
        let following = try Self.trackedPeople("vtest-panning.mp4", labels: "labels/vtest-panning.mot.txt")
        let still = try Self.trackedPeople("vtest-panning.mp4", labels: "labels/vtest-panning.mot.txt", followsCameraMotion: false)
        #expect(following.falsePeoplePerFrame <= 0.25, "\(following.jsonLine)")
        #expect(following.falsePeoplePerFrame * 2 <= still.falsePeoplePerFrame, "\(following.jsonLine) against \(still.jsonLine)")
        #expect((following.recall ?? 0) >= 0.72, "\(following.jsonLine)")
        #expect((following.rankOneOnPerson ?? 0) >= 0.93, "\(following.jsonLine)")
    }

    /// The panning camera's walkers keep their identifiers when told apart by their signatures:
    /// `eval` (every 3rd frame) measured 0.841 of each walker's frames under their main
    /// identifier with re-identification, 0.527 without (a moving camera makes the motion model's
    /// guesses worse, and tracks jump between walkers who pass each other).
    @Test func walkersKeepTheirIdentifiersThroughAPanningCamera() throws {
        let seeing = try Self.trackedPeople("vtest-panning.mp4", labels: "labels/vtest-panning.mot.txt")
        let blind = try Self.trackedPeople("vtest-panning.mp4", labels: "labels/vtest-panning.mot.txt", reidentification: false)
        #expect((seeing.identityKept ?? 0) >= 0.75, "\(seeing.jsonLine)")
        #expect((seeing.identityKept ?? 0) >= (blind.identityKept ?? 1) + 0.1, "\(seeing.jsonLine) against \(blind.jsonLine)")
        #expect(seeing.falsePeoplePerFrame <= 0.25 && (seeing.recall ?? 0) >= 0.72, "\(seeing.jsonLine)")
    }

    /// One person, close, a handheld camera in a car (samples/carphone_pristine.mp4): one subject
    /// on them, ranked first, with one identifier; no second face.
    @Test func onePersonIsOneSubjectWithOneIdentifier() throws {
        let score = try Self.trackedPeople("carphone_pristine.mp4", labels: "labels/carphone.mot.txt")
        #expect(score.frames == 120)
        #expect(score.subjectsPerFrame <= 1.2 && (score.recall ?? 0) >= 0.95, "\(score.jsonLine)")
        #expect((score.rankOneOnPerson ?? 0) >= 0.98 && (score.identityKept ?? 0) >= 0.95, "\(score.jsonLine)")
        #expect(score.framesWithExtraFaces == 0 && score.framesWithOversizedRankOne == 0, "\(score.jsonLine)")
    }

    /// The ghost counts: a second face where one person is, a first subject stretched over an
    /// eighth of the picture beside its person, and identities kept.
    @Test func ghostsAndIdentitiesAreCounted() {
        var score = PeopleScore()
        let size = ImageSize(width: 100, height: 100)
        let person = PixelRect(x: 40, y: 20, width: 20, height: 60)
        let a = UUID(), b = UUID()
        let face = UnitRect(x: 0.45, y: 0.65, width: 0.1, height: 0.1)
        func subject(_ id: UUID, _ rect: UnitRect, rank: Int, face: UnitRect? = nil) -> TrackedSubject {
            TrackedSubject(id: id, kind: .person, rect: rect, faceRect: face, saliencyRank: rank)
        }
        let onPerson = UnitRect(x: 0.4, y: 0.2, width: 0.2, height: 0.6)
        // Frames 1-3: the person as `a`; frame 4 as `b`, with a stretched ghost of `a` first
        // holding an old face.
        for _ in 0..<3 { score.add(reported: [subject(a, onPerson, rank: 1, face: face)], labelled: [person], identities: [7], size: size) }
        let stretched = UnitRect(x: 0.1, y: 0.1, width: 0.6, height: 0.7)
        score.add(reported: [subject(a, stretched, rank: 1, face: UnitRect(x: 0.1, y: 0.7, width: 0.1, height: 0.1)),
                             subject(b, onPerson, rank: 2, face: face)], labelled: [person], identities: [7], size: size)
        #expect(score.framesWithExtraFaces == 1)
        #expect(score.framesWithOversizedRankOne == 1)
        #expect(score.identityKept == 0.75, "found as a on 3 of its 4 frames")
        #expect(score.jsonLine.contains(#""framesWithExtraFaces":1,"framesWithOversizedRankOne":1,"identityKept":0.750"#), "\(score.jsonLine)")
    }

    /// The small people's pass: a tall box over two short people side by side is the pair; a
    /// short box half on a taller one is a piece of it; a short box inside a tall one that
    /// stands is the same person.
    @Test func smallPeopleAndTheMainSearchAreMergedAsOnePersonEach() {
        func body(_ x: Double, _ y: Double, _ w: Double, _ h: Double, _ c: Double = 0.9) -> Observation {
            Observation(type: .humanBody, rect: UnitRect(x: x, y: y, width: w, height: h), confidence: c)
        }
        // A box twice their height over two walkers: the two.
        let pair = body(0.70, 0.60, 0.08, 0.26)
        let left = body(0.705, 0.64, 0.03, 0.11, 1.0), right = body(0.74, 0.64, 0.03, 0.11, 1.0)
        #expect(Set(HOGPeopleDetector.merged(tall: [pair], short: [left, right]).map(\.rect)) == [left.rect, right.rect])
        // Their legs, found as a small person, half on them: the tall one only.
        let walker = body(0.40, 0.50, 0.04, 0.14, 0.8)
        let legs = body(0.42, 0.48, 0.03, 0.10, 1.0)
        #expect(HOGPeopleDetector.merged(tall: [walker], short: [legs]).map(\.rect) == [walker.rect])
        // Inside them, surer than them: still the tall one.
        let inside = body(0.405, 0.51, 0.03, 0.11, 1.0)
        #expect(HOGPeopleDetector.merged(tall: [walker], short: [inside]).map(\.rect) == [walker.rect])
        // A small person on their own is kept.
        let far = body(0.10, 0.70, 0.02, 0.09)
        #expect(HOGPeopleDetector.merged(tall: [walker], short: [far]).count == 2)
    }

    /// The pass's picture: vtest.avi's frame is enlarged by two pyramid steps, so the main
    /// search's first level is its third and is searched once; a 1280x720 frame can be
    /// enlarged no further than the working width, and gets a level of its own there.
    @Test func theSmallPeoplesPassSharesALevelWhereItCan() throws {
        let hog = try HOGPeopleDetector(params: .fast)
        let vtest = ImageSize(width: 768, height: 576)
        let pass = try #require(hog.smallPeoplePass(for: vtest, mainWork: hog.workingSize(for: vtest)))
        #expect(pass.work == ImageSize(width: 1152, height: 864) && pass.levels == 2 && pass.sharesMainLevel)
        let hd = ImageSize(width: 1280, height: 720)
        let wide = try #require(hog.smallPeoplePass(for: hd, mainWork: hog.workingSize(for: hd)))
        #expect(wide.work == hd && !wide.sharesMainLevel && wide.levels == 2)
        // Looking for tall people only, or without the pass: none.
        #expect(hog.smallPeoplePass(for: vtest, mainWork: hog.workingSize(for: vtest, smallestHeight: 0.3), smallestHeight: 0.3) == nil)
        var without = HOGPeopleDetector.Params.fast
        without.smallPeopleFrom = nil
        #expect(try HOGPeopleDetector(params: without).smallPeoplePass(for: vtest, mainWork: hog.workingSize(for: vtest)) == nil)
        // Frames of 1 px and of 4000 px, and sizes that are no number, do not trap.
        for size in [ImageSize(width: 1, height: 1), ImageSize(width: 4000, height: 4000), ImageSize(width: 0, height: 0)] {
            _ = hog.smallPeoplePass(for: size, mainWork: hog.workingSize(for: size), smallestHeight: .nan)
        }
    }

    /// The main search is the same with the small people's pass: each box it finds alone is
    /// found with the pass too, or stands as two or more small people (vtest.avi's frames).
    @Test func theSmallPeoplesPassLeavesTheMainSearchAlone() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("vtest.avi"))
        let with = try HOGPeopleDetector(params: .fast)
        var params = HOGPeopleDetector.Params.fast
        params.smallPeopleFrom = nil
        let alone = try HOGPeopleDetector(params: params)
        var more = 0
        for index in [0, 100, 200, 400] {
            let image = frames[index].image
            let all = try with.detect(in: image, minimumConfidence: 0.5)
            let tall = try alone.detect(in: image, minimumConfidence: 0.5)
            for box in tall {
                let again = all.contains { $0.rect.intersectionOverUnion(box.rect) > 0.95 }
                let split = all.filter { box.rect.intersectionOverSmaller($0.rect) > 0.8 && $0.rect.height < box.rect.height }.count >= 2
                #expect(again || split, "frame \(index): \(box.rect) neither found again nor split")
            }
            more += all.count - tall.count
        }
        #expect(more > 0, "the pass found no one the main search did not")
    }
}
