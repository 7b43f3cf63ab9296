import DockTrack
import Foundation
import Testing

/// `docktrack reframe`: recorded video in, a video that follows the speaker out, judged against
/// faces found in the input by a detector of its own (MTCNN, not the one reframe runs).
@Suite(.onTestThreads) struct ReframeToolTests {
    /// How the output's windows show the input's largest face, frame by frame.
    struct Judgement: CustomStringConvertible {
        var frames = 0, withFace = 0, inside = 0, middleThird = 0
        /// The largest move of the window's centre between two frames, over what the speed limit
        /// allows (plus half the change of the window's width, which a zoom moves the centre by
        /// at an edge).
        var worstJump = 0.0
        var insideShare: Double { Double(inside) / Double(max(1, withFace)) }
        var middleShare: Double { Double(middleThird) / Double(max(1, withFace)) }
        var description: String {
            String(format: "%d frames, %d with a face: inside %.3f, centre in the middle third %.3f, worst jump %.2f of the limit",
                   frames, withFace, insideShare, middleShare, worstJump)
        }
    }

    /// The frames of Megamind.avi that start a new shot: the mean gray-level difference of
    /// consecutive 32x18 thumbnails (OpenCV-Python, INTER_AREA) is 34 to 43 there, under 6 elsewhere.
    static let megamindCuts: Set<Int> = [1, 98, 154, 200]

    /// Megamind.avi's largest face in each frame (samples/labels/Megamind.faces.tsv: what
    /// `detect -d mtcnn-face` found, kept rather than found again by each run, 11 s of MTCNN),
    /// for the tests that judge a reframing of it.
    static let megamindFaces = Result { () throws -> [Int: UnitRect] in
        var faces: [Int: UnitRect] = [:]
        for line in try String(contentsOfFile: Fixtures.sample("labels/Megamind.faces.tsv"), encoding: .utf8).split(separator: "\n")
        where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t")
            guard fields.count == 5, let frame = Int(fields[0]) else { throw LabelError.malformed(String(line)) }
            let numbers = fields.dropFirst().compactMap { Double($0) }
            guard numbers.count == 4 else { throw LabelError.malformed(String(line)) }
            faces[frame] = UnitRect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        }
        return faces
    }

    enum LabelError: Error { case malformed(String) }

    /// How the windows of `states` show `faces` (the input's largest face by frame). `cuts`:
    /// frames that start a new shot in the input, where the window may cut too.
    static func judge(states: String, faces: [Int: UnitRect], size: ImageSize, framesPerSecond: Double, degreesPerSecond: Double = 30,
                      fov: Double = 70, cuts: Set<Int> = []) throws -> Judgement {
        var judgement = Judgement()
        var previous: UnitRect?
        let allowed = degreesPerSecond / fov * Double(size.width) / framesPerSecond
        for line in try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n") {
            let row = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let c = try #require(row["crop"] as? [String: Double])
            let crop = UnitRect(x: c["x"]!, y: c["y"]!, width: c["width"]!, height: c["height"]!)
            judgement.frames += 1
            let frame = try #require(row["frame"] as? Int)
            if let previous, !cuts.contains(frame) {
                let moved = abs(crop.midX - previous.midX) * Double(size.width)
                let zoomed = abs(crop.width - previous.width) * Double(size.width) / 2
                judgement.worstJump = max(judgement.worstJump, moved / (allowed + zoomed))
            }
            previous = crop
            guard let face = faces[frame] else { continue }
            judgement.withFace += 1
            let left = (face.minX - crop.x) / crop.width, right = (face.maxX - crop.x) / crop.width
            let middle = (face.midX - crop.x) / crop.width, height = (face.midY - crop.y) / crop.height
            if left >= 0 && right <= 1 && (0...1).contains(height) { judgement.inside += 1 }
            if (1.0 / 3...2.0 / 3).contains(middle) { judgement.middleThird += 1 }
        }
        return judgement
    }

    @Test func megamindAsAPortraitVideoKeepsTheSpeakerAndTheSound() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("portrait.mp4").path, states = folder.appendingPathComponent("states.jsonl").path
        let run = try ToolRun.docktrack(["reframe", Fixtures.sample("Megamind.avi"), output, "--aspect", "9:16", "--states", states, "--summary"])
        try #require(run.status == 0, "\(run.stderr)")
        // Every input frame, at the widest 9:16 window's size, the input's rate; the sound kept.
        var reframed = try MediaFile.open(output)
        #expect(reframed.info.size == ImageSize(width: 296, height: 528))
        let input = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        #expect(abs((reframed.info.framesPerSecond ?? 0) - (input.info.framesPerSecond ?? 0)) < 0.01)
        var count = 0
        while try reframed.nextFrame() != nil { count += 1 }
        #expect(count == 270)
        let sound = try AudioFileSource(path: output), original = try AudioFileSource(path: Fixtures.sample("Megamind.avi"))
        #expect(abs(sound.duration - original.duration) < 0.2, "\(sound.duration) s of sound against \(original.duration) s")
        #expect(run.stderr.contains("sound copied"))
        let judgement = try Self.judge(states: states, faces: try Self.megamindFaces.get(), size: ImageSize(width: 720, height: 528),
                                       framesPerSecond: 24, cuts: Self.megamindCuts)
        // Measured 1.000 / 0.993 (before the window cut with the film's cuts: 0.944 / 0.914).
        #expect(judgement.insideShare >= 0.97, "\(judgement)")
        #expect(judgement.middleShare >= 0.9, "\(judgement)")
        #expect(judgement.worstJump <= 1.01, "\(judgement)")
    }

    /// Megamind at half size near the top-left corner of a grey 1280x720 picture, 120 frames.
    static func cornerSpeaker(in folder: URL) throws -> String {
        // (Its faces are Megamind's, where `cornerSpeakerFaces` puts them.)
        let path = folder.appendingPathComponent("corner-speaker.avi").path
        let output = try AnnotatedOutput(path: path, size: ImageSize(width: 1280, height: 720), framesPerSecond: 24)
        var source = try MediaFile.open(Fixtures.sample("Megamind.avi"))
        for _ in 0..<120 {
            guard let frame = try source.nextFrame() else { break }
            // The clip at half scale with its corner at (40, 40): the window into it, twice as large.
            try output.write(try frame.image.cropped(to: PixelRect(x: -80, y: -80, width: 2560, height: 1440), size: ImageSize(width: 1280, height: 720)))
        }
        output.close()
        return path
    }

    /// The corner speaker's faces: Megamind's, the clip drawn at half size with its top-left
    /// corner at (40, 40) px of the 1280x720 picture (``cornerSpeaker(in:)``); origin at the
    /// lower-left, as `detect` writes them.
    static func cornerSpeakerFaces() throws -> [Int: UnitRect] {
        try megamindFaces.get().filter { $0.key < 120 }.mapValues { face in
            UnitRect(x: (40 + face.x * 360) / 1280, y: 1 - (40 + (1 - face.y) * 264) / 720,
                     width: face.width * 360 / 1280, height: face.height * 264 / 720)
        }
    }

    @Test func aSpeakerNearACornerOfA720pPictureIsZoomedInAndKeptInTheMiddle() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { if ProcessInfo.processInfo.environment["KEEP"] == nil { try? FileManager.default.removeItem(at: folder) } }
        let scene = try Self.cornerSpeaker(in: folder)
        let output = folder.appendingPathComponent("portrait.mp4").path, states = folder.appendingPathComponent("states.jsonl").path
        let run = try ToolRun.docktrack(["reframe", scene, output, "--aspect", "9:16", "--size", "360x640", "--states", states])
        try #require(run.status == 0, "\(run.stderr)")
        var reframed = try MediaFile.open(output)
        #expect(reframed.info.size == ImageSize(width: 360, height: 640))
        var count = 0
        while try reframed.nextFrame() != nil { count += 1 }
        #expect(count == 120)
        let zooms = try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n").compactMap {
            (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["zoom"] as? Double
        }
        #expect((zooms.last ?? 0) > 1.3, "the window zoomed in to \(zooms.last ?? 0)")
        let judgement = try Self.judge(states: states, faces: try Self.cornerSpeakerFaces(), size: ImageSize(width: 1280, height: 720), framesPerSecond: 24)
        print("corner speaker reframed: \(judgement)")
        #expect(judgement.insideShare >= 0.95, "\(judgement)")
        #expect(judgement.middleShare >= 0.8, "\(judgement)")
        #expect(judgement.worstJump <= 1.01, "\(judgement)")
    }

    /// tools/reframe-batch.sh: one manifest line per job index (Kubernetes, Slurm), a JSON line per
    /// file, failures recorded, and a second run that does only what is not done.
    @Test func aBatchOverAManifestRecordsEachFileAndResumes() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manifest = folder.appendingPathComponent("manifest.txt"), out = folder.appendingPathComponent("out").path
        try "\(Fixtures.sample("Megamind.avi"))\n\(folder.path)/missing.mp4\n".write(to: manifest, atomically: true, encoding: .utf8)
        let script = Fixtures.root.appendingPathComponent("tools/reframe-batch.sh").path
        // (The index from the environment unset: this test may itself run in a job array.)
        let environment: [String: String?] = ["DOCKTRACK": Fixtures.tool, "REFRAME_ARGS": "--aspect 9:16 --end 24",
                                              "JOB_COMPLETION_INDEX": nil, "SLURM_ARRAY_TASK_ID": nil]
        func json(_ name: String) throws -> [String: Any] {
            let text = try String(contentsOfFile: try Self.batchOutput(name, ".json", in: out), encoding: .utf8)
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        }
        let first = try ToolRun.run("/bin/bash", [script, manifest.path, out], environment: environment.merging(["JOB_COMPLETION_INDEX": "0"]) { $1 })
        #expect(first.status == 0, "\(first.stderr)")
        let done = try json("Megamind")
        #expect(done["status"] as? String == "ok" && done["frames"] as? Int == 24 && done["sound"] as? String == "copied", "\(done)")
        let video = try Self.batchOutput("Megamind", ".reframed.mp4", in: out)
        let failed = try ToolRun.run("/bin/bash", [script, manifest.path, out], environment: environment.merging(["SLURM_ARRAY_TASK_ID": "1"]) { $1 })
        #expect(failed.status == 1)
        let failure = try json("missing")
        #expect(failure["status"] as? String == "failed" && failure["exit"] as? Int == 1 && (failure["error"] as? String ?? "").contains("missing.mp4"),
                "\(failure)")
        // Again: the file done is not done twice; the failed one is tried again.
        let modified = try FileManager.default.attributesOfItem(atPath: video)[.modificationDate] as? Date
        let again = try ToolRun.run("/bin/bash", [script, manifest.path, out, "0"], environment: environment)
        #expect(again.status == 0 && again.stderr.contains("done before"), "\(again.stderr)")
        #expect(try FileManager.default.attributesOfItem(atPath: video)[.modificationDate] as? Date == modified)
        #expect(try ToolRun.run("/bin/bash", [script, manifest.path, out, "1"], environment: environment).status == 1)
        // No index, or one past the manifest: a usage error, nothing written.
        #expect(try ToolRun.run("/bin/bash", [script, manifest.path, out], environment: environment).status == 64)
        #expect(try ToolRun.run("/bin/bash", [script, manifest.path, out, "7"], environment: environment).status == 65)
    }

    /// The one output of a batch for the input named `stem` (reframe-batch.sh names it
    /// STEM-CHECKSUM`suffix`).
    static func batchOutput(_ stem: String, _ suffix: String, in folder: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(stem + "-") && $0.hasSuffix(suffix) }
        #expect(names.count == 1, "\(stem)…\(suffix) in \(folder): \(names)")
        return "\(folder)/\(try #require(names.first))"
    }

    @Test func badInputsGetOneLineSayingWhatIsWrong() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out.mp4").path
        let missing = try ToolRun.docktrack(["reframe", folder.appendingPathComponent("nothing.mp4").path, out])
        #expect(missing.status != 0 && missing.stderr.contains("nothing.mp4"), "\(missing.stderr)")
        let truncated = try Fixtures.truncatedCopy(of: "Megamind.avi", bytes: 3000, in: folder)
        let corrupt = try ToolRun.docktrack(["reframe", truncated, out])
        #expect(corrupt.status != 0 && !corrupt.stderr.isEmpty)
        for arguments in [["--aspect", "0:16"], ["--aspect", "nine"], ["--size", "0x10"], ["--max-upscale", "nan"], ["--look-ahead=-1"],
                          ["--aspect", "9:16", "--size", "1280x720"]] {
            let run = try ToolRun.docktrack(["reframe", Fixtures.sample("Megamind.avi"), out] + arguments)
            #expect(run.status != 0 && run.stderr.split(separator: "\n").count <= 3, "\(arguments): \(run.stderr)")
        }
        let same = try ToolRun.docktrack(["reframe", Fixtures.sample("Megamind.avi"), Fixtures.sample("Megamind.avi")])
        #expect(same.status != 0 && same.stderr.contains("OUT"))
        #expect(FileManager.default.fileExists(atPath: Fixtures.sample("Megamind.avi")))
    }
}
