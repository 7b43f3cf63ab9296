import ArgumentParser
import DockTrack
import Foundation

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Score a detector's faces against faces labelled by hand, and the people tracked in clips against people labelled by hand.",
        discussion: """
            LABELS: dlib's imglab XML files (<image file='a.jpg'><box top='…' left='…' width='…' \
            height='…'/></image>; files relative to the XML's folder; a box with ignore='1' counts \
            neither way). A labelled face is found when a face box overlaps it by at least 0.3 \
            (intersection over union), each box matching one face; a face box on no labelled face is \
            false. --negative adds pictures or clips with no face at all (every face found on them is \
            false). --canvas WIDTH also lays all the labelled pictures out on one canvas of that width, \
            faces unchanged in pixels: small faces in a large frame.
            stdout: a line per picture (and per negative), then the totals as JSON:
            {"images":9,"faces":43,"found":41,"falseFaces":1,"recall":0.953,"precision":0.976,"msPerImage":…}
            (with --canvas, a second JSON line for the canvas).

            CLIPS: --clip FILE --mot LABELS, in pairs: the clip is tracked as `docktrack track FILE` \
            tracks it (the detector every 4th frame, re-detection between, ranking), and the people \
            reported in each frame are compared with the people labelled in it. LABELS is \
            MOTChallenge's ground-truth text: frame,id,left,top,width,height[,considered,class,visibility] \
            (frame from 1, pixels from the top-left; considered 0: counts neither way); a frame without \
            a line has nobody in it. A subject is on a person when most of it is inside their box or \
            they overlap by 0.3; one subject per person; a subject on nobody is a false person.
            stdout per clip: {"clip":"bikes.mp4","frames":250,"labelledPeople":…,"found":…,"recall":…,\
            "peopleFrom50px":…,"recallFrom50px":…,"falsePeople":…,"falsePeoplePerFrame":…,\
            "subjectsPerFrame":…,"framesWithRankOne":…,\
            "rankOneOnPerson":…,"framesWithExtraFaces":…,"framesWithOversizedRankOne":…,\
            "identityKept":…,"msPerFrame":…}
            framesWithExtraFaces: frames where more subjects show a face than there are people; \
            framesWithOversizedRankOne: frames whose first subject covers over an eighth of the \
            picture and over twice the person it is on (or is on nobody); identityKept: of the \
            frames each labelled person was found in, the share found as their most frequent \
            subject (1: one identifier each).

            GESTURES: --gesture-clip FILE (repeatable), each tracked as `track` does with its hands \
            watched, its "follow me" gestures scored against --gesture-labels (tab-separated clip, first \
            frame, last frame, kind; samples/gestures/gestures.tsv): a labelled palm-spread held 0.4 s \
            or more is recognized when a gesture comes within 1 s of its first frame; a gesture on no \
            labelled spread palm is false (a clip the labels do not name: every gesture).
            stdout per clip: {"clip":"palm_close_portrait.mp4","frames":180,"heldPalms":2,\
            "recognized":2,"gestures":2,"falseGestures":0,"times":[0.4,1.93]}
            """
    )

    @Argument(help: "dlib XML label files.")
    var labels: [String] = []

    @Option(help: ArgumentHelp("A clip whose people are labelled in the --mot file of the same position. Repeatable.", valueName: "file"))
    var clip: [String] = []

    @Option(help: ArgumentHelp("The MOTChallenge people labels of the --clip of the same position. Repeatable.", valueName: "file"))
    var mot: [String] = []

    @Option(help: ArgumentHelp("Track and score each clip up to this frame (from 1) only: for labels that cover the first frames of a clip.", valueName: "frame"))
    var end: Int?

    @OptionGroup var detection: DetectorOptions

    @Option(help: ArgumentHelp("Track the clips detecting every Nth frame (default: track's, every \(TrackConfiguration.defaultDetectEvery)th frame or more often below 13.3 fps).", valueName: "n"))
    var detectEvery: Int?

    @Option(help: ArgumentHelp("Pass over at most this many detection rounds in a row when the picture did not move outside the people found (0: look every round; default: track's, \(TrackingPipeline.Params.carriedNeedlessRest)).", valueName: "rounds"))
    var lookRest: Int?

    @Flag(inversion: .prefixedNo, help: "Tell people apart by re-identification signatures (see track --reidentification).")
    var reidentification = true

    @Option(help: ArgumentHelp("A clip to count the \"follow me\" gestures in, as track recognizes them; scored against --gesture-labels (a clip they do not name: every gesture is false). Repeatable.", valueName: "file"))
    var gestureClip: [String] = []

    @Option(help: ArgumentHelp("What the hands do in the --gesture-clip files, labelled by hand (samples/gestures/gestures.tsv's format).", valueName: "tsv"))
    var gestureLabels: String?

    @Option(help: ArgumentHelp("A picture or clip with no face in it (every frame counts). Repeatable.", valueName: "file"))
    var negative: [String] = []

    @Option(help: ArgumentHelp("Also score the labelled pictures laid out on one canvas this many pixels wide.", valueName: "width"))
    var canvas: Int?

    func validate() throws {
        guard !labels.isEmpty || !clip.isEmpty || !gestureClip.isEmpty else {
            throw ValidationError("give at least one label file, a --clip with its --mot labels, or a --gesture-clip")
        }
        guard gestureClip.isEmpty || (labels.isEmpty && clip.isEmpty) else { throw ValidationError("score gestures in a run of their own") }
        guard gestureLabels == nil || !gestureClip.isEmpty else { throw ValidationError("--gesture-labels is for --gesture-clip runs") }
        guard clip.count == mot.count else { throw ValidationError("give each --clip its --mot labels (\(clip.count) clips, \(mot.count) label files)") }
        guard labels.isEmpty || clip.isEmpty else { throw ValidationError("score face label files or clips, not both in one run") }
        if let end, end < 1 { throw ValidationError("--end must be a frame number from 1") }
        guard TrackConfiguration.detectEveryRange.contains(detectEvery ?? 1) else { throw ValidationError(TrackConfiguration.detectEveryRangeMessage) }
        guard (0...100).contains(lookRest ?? 0) else { throw ValidationError("--look-rest must be between 0 and 100") }
        guard end == nil || !clip.isEmpty else { throw ValidationError("--end is for --clip runs") }
        if let canvas, !(64...16384).contains(canvas) { throw ValidationError("--canvas must be between 64 and 16384 pixels") }
    }

    func run() throws {
        if !gestureClip.isEmpty { return try runGestureClips() }
        if !clip.isEmpty { return try runClips() }
        try reportingErrors {
            let detector = try detection.makeDetector()
            let images = try labels.flatMap { try LabelledImage.read(dlibXML: $0) }
            var score = DetectionScore()
            func faces(in image: Image) throws -> ([UnitRect], Double) {
                let started = ContinuousClock.now
                let found = try detector.detect(in: image, minimumConfidence: detection.threshold).filter { $0.type == .humanFace }.map(\.rect)
                return (found, ProgressLine.seconds(ContinuousClock.now - started))
            }
            for labelled in images {
                let image: Image
                do { image = try Image(contentsOf: labelled.path) } catch { throw ToolError("\(labelled.path): \(error)") }
                let (found, seconds) = try faces(in: image)
                var one = DetectionScore()
                one.add(found: found, labelled: labelled.boxes, ignored: labelled.ignored, size: image.size, seconds: seconds)
                score.add(found: found, labelled: labelled.boxes, ignored: labelled.ignored, size: image.size, seconds: seconds)
                try printLine(String(format: "%@\t%dx%d\tfound %d/%d\tfalse %d\t%.1f ms", (labelled.path as NSString).lastPathComponent,
                                 image.width, image.height, one.found, one.faces, one.falseFaces, seconds * 1000))
            }
            for path in negative {
                var source = try MediaFile.open(path)
                var falseFaces = 0, frames = 0
                while let frame = try source.nextFrame() {
                    let (found, seconds) = try faces(in: frame.image)
                    score.add(found: found, labelled: [], size: frame.image.size, seconds: seconds)
                    falseFaces += found.count
                    frames += 1
                }
                try printLine("\((path as NSString).lastPathComponent)\tnegative, \(frames) frame\(frames == 1 ? "" : "s")\tfalse \(falseFaces)")
            }
            try printLine(score.jsonLine)
            if let canvas {
                let (image, labelled) = try LabelledImage.canvas(of: images, width: canvas)
                let (found, seconds) = try faces(in: image)
                var whole = DetectionScore()
                whole.add(found: found, labelled: labelled.boxes, ignored: labelled.ignored, size: image.size, seconds: seconds)
                printError("docktrack: canvas \(image.width)x\(image.height) of \(images.count) pictures")
                try printLine(whole.jsonLine)
            }
        }
    }

    /// Each clip tracked as `track` does, its people scored against its labels.
    func runClips() throws {
        try reportingErrors {
            for (path, labelPath) in zip(clip, mot) {
                let labelled = try LabelledVideo.read(mot: labelPath)
                var source = try MediaFile.open(path)
                let pipeline = try trackingPipeline(for: source)
                var score = PeopleScore()
                var index = 0
                let started = ContinuousClock.now
                while index < end ?? .max, let frame = try source.nextFrame() {
                    let subjects = try pipeline.process(frame)
                    score.add(reported: subjects, labelled: labelled.people[index] ?? [], ignored: labelled.ignored[index] ?? [],
                              identities: labelled.identities[index] ?? [], size: frame.image.size)
                    index += 1
                }
                let lastLabelled = (labelled.people.keys.max() ?? -1) + 1
                if lastLabelled > index {
                    throw ToolError(end.map { "\(labelPath) labels frame \(lastLabelled), past --end \($0)" }
                                    ?? "\(labelPath) labels frame \(lastLabelled) but \(path) has \(index) frames: not its labels?")
                }
                let ms = ProgressLine.seconds(ContinuousClock.now - started) * 1000 / Double(max(index, 1))
                let name = (path as NSString).lastPathComponent.replacingOccurrences(of: "\"", with: "'")
                try printLine("{\"clip\":\"\(name)\"," + score.jsonLine.dropFirst().dropLast() + String(format: ",\"msPerFrame\":%.2f}", ms))
            }
        }
    }

    /// Each clip tracked as `track` does, hands watched; its gestures scored against its labels.
    func runGestureClips() throws {
        try reportingErrors {
            let labels = try gestureLabels.map { path in
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ToolError("\(path): cannot read the gesture labels (no such file, or not text)")
                }
                do { return try GestureLabels(tsv: text) }
                catch let error as GestureLabels.Malformed { throw ToolError("\(path): \(error)") }
            } ?? GestureLabels(tsv: "")
            for path in gestureClip {
                var source = try MediaFile.open(path)
                let pipeline = try trackingPipeline(for: source)
                var gestures: [GestureEvent] = [], frames = 0
                while let frame = try source.nextFrame() {
                    _ = try pipeline.process(frame)
                    gestures += pipeline.takeGestures()
                    frames += 1
                }
                let name = (path as NSString).lastPathComponent
                let score = GestureScore(gestures: gestures, frames: frames, framesPerSecond: source.info.framesPerSecond ?? 30,
                                         intervals: labels.clips[name] ?? [])
                try printLine("{\"clip\":\"\(name.replacingOccurrences(of: "\"", with: "'"))\"," + score.jsonLine.dropFirst())
            }
        }
    }

    /// The pipeline `track` runs over `source`'s frames.
    func trackingPipeline(for source: any FrameSource) throws -> TrackingPipeline {
        try TrackingPipeline.overFile(detector: try detection.makeDetector(), models: detection.model.store,
                                      detectEvery: detectEvery ?? TrackConfiguration.detectEvery(framesPerSecond: source.info.framesPerSecond),
                                      minimumConfidence: detection.threshold,
                                      longestNeedlessRest: lookRest ?? TrackingPipeline.Params.carriedNeedlessRest,
                                      reidentification: reidentification)
    }
}
