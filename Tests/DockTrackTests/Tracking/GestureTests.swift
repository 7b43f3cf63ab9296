import DockTrack
import DockTrackTestKit
import Foundation
import Testing

/// The "follow me" palm (issue "Hands up"): on the labelled real clips of samples/gestures, and
/// on clips where nobody makes it.
@Suite(.onTestThreads) struct GestureTests {
    /// The labelled intervals of `clip` (samples/gestures/gestures.tsv): first and last frame, kind.
    static func labels(_ clip: String) throws -> [(first: Int, last: Int, kind: String)] {
        try String(contentsOfFile: Fixtures.sample("gestures/gestures.tsv"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: "\t").map(String.init) }
            .filter { $0.count == 4 && $0[0] == clip }
            .map { (Int($0[1])!, Int($0[2])!, $0[3]) }
    }

    /// `track CLIP --states`'s lines: each frame's subjects and gestures.
    static func states(of clip: String, _ extra: [String] = []) throws -> [SubjectStatesRecord] {
        let file = try Fixtures.temporaryFolder().appendingPathComponent("states.jsonl").path
        let run = try ToolRun.docktrack(["track", clip, "--states", file, "--sequential-identifiers"] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        return try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(SubjectStatesRecord.self, from: Data($0.utf8)) }
    }

    /// The phone clip: the two palms held still for 0.4 s or more (frames 0-27 and 49-63, 30
    /// fps) are each recognized within a second of their start, as the person tracked then;
    /// the short flashes of a palm (37-40, 116-125, 138-143: 0.13-0.33 s), the fists, the flat
    /// palm, the pointing hand and the thumb make nothing. The first chooses the person, the
    /// second (the same person) lets them go. `--gestures off`: nothing.
    @Test func aPalmHeldUpIsRecognizedWithinASecondAndOnlyThen() throws {
        let clip = Fixtures.sample("gestures/palm_close_portrait.mp4")
        let records = try Self.states(of: clip)
        let gestures = records.flatMap(\.gestures)
        let held = try Self.labels("palm_close_portrait.mp4").filter { $0.kind == "palm-spread" && $0.last - $0.first >= 12 }
        #expect(held.map(\.first) == [0, 49], "\(held)")
        #expect(gestures.count == held.count, "one gesture for each palm held: \(gestures.map(\.time))")
        for (gesture, palm) in zip(gestures, held) {
            let onset = Double(palm.first) / 30
            #expect(gesture.kind == .followMe)
            #expect(gesture.time >= onset && gesture.time <= onset + 1, "recognized at \(gesture.time) s, the palm up at \(onset) s")
            let frame = try #require(records.first { $0.gestures.contains(gesture) })
            #expect(frame.subjects.contains { $0.id == gesture.subject && $0.kind == .person }, "the gesture is a tracked person's")
            #expect(gesture.hand.width > 0.2, "the hand is close to the lens, a large part of the picture: \(gesture.hand)")
        }
        let off = try Self.states(of: clip, ["--gestures", "off"])
        let offGestures = off.flatMap(\.gestures)
        #expect(off.count == records.count && offGestures.isEmpty, "--gestures off")
    }

    /// The same clip through the pipeline: the first gesture chooses its person (the ranker's
    /// selection, as selectSubjects would), the second, by the same person, lets them go.
    @Test func theFirstGestureChoosesThePersonAndTheSecondLetsGo() throws {
        var params = TrackingPipeline.Params()
        params.detectEvery = 4
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make("default", models: Fixtures.models), cues: nil,
                                        params: params, identifiers: .sequential)
        try pipeline.redetect(models: Fixtures.models)
        try pipeline.watchGestures(models: Fixtures.models)
        var source = try MediaFile.open(Fixtures.sample("gestures/palm_close_portrait.mp4"))
        var selections: [[UUID]] = []
        while let frame = try source.nextFrame() {
            _ = try pipeline.process(frame)
            for gesture in pipeline.takeGestures() {
                selections.append((pipeline.ranker as? SaliencyRanker)?.selection ?? [])
                if selections.count == 1 { #expect(selections[0] == [gesture.subject]) }
            }
        }
        #expect(selections.count == 2 && selections.last == [], "chosen, then let go: \(selections)")
    }

    /// Live (detection and hands each on a thread of their own): the two gestures, the first
    /// choosing the person. Each frame is handed on once both threads are done with the
    /// one before (a machine that keeps up), decided by their counts, not by time.
    @Test func onItsOwnThreadTheWatchFindsTheSameGestures() throws {
        var params = TrackingPipeline.Params()
        params.asyncDetection = true
        params.detectEvery = 4
        let pipeline = TrackingPipeline(detector: try DetectorCatalog.make("default", models: Fixtures.models), cues: nil,
                                        params: params, identifiers: .sequential)
        try pipeline.watchGestures(models: Fixtures.models)
        defer { pipeline.stopThreads() }
        let worker = try #require(pipeline.worker), hands = try #require(pipeline.handsThread)
        var source = try MediaFile.open(Fixtures.sample("gestures/palm_close_portrait.mp4"))
        var gestures: [GestureEvent] = [], selections: [[UUID]] = [], offered = 0
        while let frame = try source.nextFrame() {
            _ = try pipeline.process(frame)
            offered += 1
            #expect(waitWhile(every: .milliseconds(2)) { worker.handledFrames < offered || hands.handledFrames < offered })
            for gesture in pipeline.takeGestures() {
                gestures.append(gesture)
                selections.append((pipeline.ranker as? SaliencyRanker)?.selection ?? [])
            }
        }
        _ = try pipeline.process(Frame(index: offered, time: Double(offered) / 30, image: try Frame.blank(index: 0, time: 0).image))
        gestures += pipeline.takeGestures()
        // Detections come a frame late here, so the person (and the searches' phase) too: the
        // times differ from the file run's, each still within a second of its palm going up.
        let onsets = [0.0, 49.0 / 30]
        #expect(gestures.count == 2 && zip(gestures, onsets).allSatisfy { $0.time >= $1 && $0.time <= $1 + 1 }, "\(gestures.map(\.time))")
        #expect(selections.first == gestures.first.map { [$0.subject] }, "chosen: \(selections)")
    }

    /// `track --serve` in front of docksim, the phone clip looping in real time: the hello says
    /// `gestures`; with tracking switched off by the client, the held palm comes to it as an
    /// accessory event naming the person and the time, and tracking is switched back on.
    @Test func aServedClientHearsTheGestureAndTrackingComesBackOn() throws {
        let docksim = try DocksimProcess()
        let track = try TrackProcess([Fixtures.sample("gestures/palm_close_portrait.mp4"), "--loop", "--dock", "unix:\(docksim.socket)"])
        defer { withExtendedLifetime((docksim, track)) {} }
        let client = try LineClient(path: track.socket)
        try client.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        let hello = try #require(client.first(within: 60) { $0.hasPrefix(#"{"type":"hello""#) }, "\(track.stderr)")
        #expect(hello.contains(#""gestures""#), "\(hello)")
        try client.send(#"{"id":1,"command":"setSystemTracking","enabled":false}"#)
        #expect(client.first(within: 30) { $0.hasPrefix(#"{"id":1,"#) }?.contains(#""type":"done""#) == true)
        let event = try #require(client.first(within: 60) { $0.contains(#""type":"accessoryEvent""#) }, "\(track.stderr)")
        guard case .accessoryEvent(.gesture(let kind, let subject, let time))? = DockMessage(line: event) else {
            Issue.record("not a gesture: \(event)")
            return
        }
        #expect(kind == "followMe" && subject != nil && time >= 0, "\(event)")
        let on = client.first(within: 30) { $0.hasPrefix(#"{"type":"systemTracking""#) }
        #expect(on?.contains(#""enabled":true"#) == true, "tracking on again: \(on ?? "nothing")")
    }

    /// In a real browser: the control page of a run over the phone clip logs the gesture and
    /// says it in its status.
    @Test func theControlPageShowsTheGesture() throws {
        let docksim = try DocksimProcess()
        let track = try TrackProcess([Fixtures.sample("gestures/palm_close_portrait.mp4"), "--loop", "--dock", "unix:\(docksim.socket)",
                                      "--http", "127.0.0.1:0"])
        defer { withExtendedLifetime((docksim, track)) {} }
        let (host, port, _) = try ControlPageTests.address(track)
        let browser = try HeadlessBrowser(width: 1000, height: 800)
        try browser.load("http://\(host):\(port)/")
        #expect(browser.waitUntil("dockState.gestures >= 1 && dockState.lastGesture.gesture === 'followMe' && dockState.lastGesture.subject.length === 36",
                                  within: 60), "\(track.stderr.suffix(400))")
        #expect(browser.waitUntil("document.getElementById('log').textContent.includes('gesture: follow me by')", within: 10))
        #expect(browser.waitUntil("document.getElementById('status').textContent.includes('last: followMe')", within: 10))
    }

    /// A phone held at the ear (carphone) and animated close-ups (Megamind, hands moving as they
    /// talk): no gesture.
    @Test(arguments: ["carphone_pristine.mp4", "Megamind.avi"])
    func noGestureWhereNobodyHoldsUpAPalm(clip: String) throws {
        let records = try Self.states(of: Fixtures.sample(clip))
        #expect(records.count > 100)
        let gestures = records.flatMap(\.gestures)
        #expect(gestures.isEmpty, "\(gestures)")
    }

    /// The hand networks on real frames of the phone clip: a spread palm reads as one, a fist
    /// as closed, a flat palm (fingers together) as not spread.
    @Test func theHandsShapeIsReadOffRealFrames() throws {
        let palms = try PalmDetector(models: Fixtures.models)
        let landmarks = try HandLandmarker(models: Fixtures.models)
        var source = try MediaFile.open(Fixtures.sample("gestures/palm_close_portrait.mp4"))
        var shapes: [Int: HandShape] = [:]
        while let frame = try source.nextFrame(), frame.index <= 75 {
            guard [12, 31, 75].contains(frame.index) else { continue }
            let size = frame.image.size
            let palm = try #require(try palms.palms(in: frame.image, region: PixelRect(x: 0, y: 0, width: Double(size.width), height: Double(size.height))).first,
                                    "a palm on frame \(frame.index)")
            let reading = try #require(try landmarks.read(in: frame.image, square: palm.handSquare))
            #expect(reading.presence > 0.9, "frame \(frame.index): \(reading.presence)")
            shapes[frame.index] = HandShape(reading.landmarks)
        }
        #expect(shapes[12]?.isSpreadPalm == true, "spread: \(String(describing: shapes[12]))")
        #expect(shapes[31]?.isClosed == true && shapes[31]?.isSpreadPalm == false, "a fist: \(String(describing: shapes[31]))")
        #expect(shapes[75]?.isSpreadPalm == false && shapes[75]?.isClosed == false, "a flat palm: \(String(describing: shapes[75]))")
    }

    /// eval's scoring: a held palm recognized within a second counts once, a gesture on no
    /// labelled spread palm is false, short palms are not asked for; a malformed line names itself.
    @Test func gesturesAreScoredAgainstTheirLabels() throws {
        let labels = try GestureLabels(tsv: "# clip\tfirst\tlast\tkind\nc.mp4\t0\t29\tpalm-spread\nc.mp4\t30\t59\tfist\nc.mp4\t60\t65\tpalm-spread\nc.mp4\t90\t149\tpalm-spread\n")
        let intervals = try #require(labels.clips["c.mp4"])
        func gesture(_ time: Double) -> GestureEvent { GestureEvent(kind: .followMe, subject: UUID(), time: time, hand: UnitRect(x: 0, y: 0, width: 0.1, height: 0.1)) }
        let score = GestureScore(gestures: [0.5, 1.5, 4.0, 7.0].map(gesture), frames: 300, framesPerSecond: 30, intervals: intervals)
        // Palms 0-29 (1 s) and 90-149 (2 s) are held; 60-65 (0.2 s) is a flash. 0.5 s: the first,
        // recognized; 1.5 s: within a second after it ended, not false; 4.0 s: the second, 1 s
        // after its start at 3.0 s; 7.0 s: on no palm.
        #expect(score.heldPalms == 2 && score.recognized == 2 && score.falseGestures == 1, "\(score)")
        #expect(GestureScore(gestures: [gesture(4.5)], frames: 300, framesPerSecond: 30, intervals: intervals).recognized == 0,
                "1.5 s after the palm went up is late")
        #expect(throws: GestureLabels.Malformed.self) { try GestureLabels(tsv: "c.mp4\t9\t3\tfist\n") }
        #expect(throws: GestureLabels.Malformed.self) { try GestureLabels(tsv: "c.mp4 0 3 fist\n") }
    }

    /// A models folder from before the hand networks: track runs on, without gestures, and says so.
    @Test func withoutTheHandModelsTrackRunsOnAndSaysGesturesAreOff() throws {
        let folder = try Fixtures.temporaryFolder().appendingPathComponent("models")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let models = Fixtures.root.appendingPathComponent("models")
        for name in try FileManager.default.contentsOfDirectory(atPath: models.path) where !name.hasPrefix("palm_") && !name.hasPrefix("hand_") {
            try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent(name), withDestinationURL: models.appendingPathComponent(name))
        }
        let run = try ToolRun.docktrack(["track", Fixtures.sample("messi5.jpg"), "--models", folder.path, "--states", "-"])
        #expect(run.status == 0 && run.stderr.contains("gestures off: no hand model"), "\(run.stderr)")
        #expect(run.stdout.contains(#""kind":"person""#), "tracked all the same: \(run.stdout.prefix(300))")
    }

    /// Pictures of 1 px to 4000 px, regions and times that are not finite: no crash, no gesture.
    @Test func oddPicturesAndNumbersMakeNoGesture() throws {
        let watch = try GestureWatch(models: Fixtures.models)
        let person = TrackedSubject(id: UUID(), kind: .person, rect: UnitRect(x: 0, y: 0, width: 1, height: 1),
                                    faceRect: UnitRect(x: 0.4, y: 0.6, width: 0.2, height: 0.2), timeInView: 1)
        for (k, size) in [ImageSize(width: 1, height: 1), ImageSize(width: 4000, height: 20), ImageSize(width: 20, height: 4000),
                          ImageSize(width: 4000, height: 3000)].enumerated() {
            let image = try Frame.blank(index: 0, time: 0, size: size).image
            for time in [Double(k), .nan, .infinity, -1e300] {
                #expect(try watch.look(in: image, at: time, subjects: [person]).isEmpty)
            }
        }
        let palms = try PalmDetector(models: Fixtures.models)
        let image = try Frame.blank(index: 0, time: 0, size: ImageSize(width: 64, height: 64)).image
        for region in [PixelRect(x: .nan, y: 0, width: 10, height: 10), PixelRect(x: 0, y: 0, width: .infinity, height: 10),
                       PixelRect(x: 0, y: 0, width: 1e300, height: 1e300), PixelRect(x: -1e9, y: -1e9, width: 10, height: 10)] {
            #expect(try palms.palms(in: image, region: region).isEmpty, "\(region)")
        }
        #expect(try HandLandmarker(models: Fixtures.models).read(in: image, square: PixelRect(x: 0, y: 0, width: 1, height: 1)) == nil)
    }
}
