import DockTrack
import Foundation
import Testing

/// The built `docktrack` tool, run as a user runs it.
@Suite(.onTestThreads) struct CommandLineTests {
    /// `--loop` plays a clip over and over, its frames numbered and timed on: carphone's 120
    /// frames at 29.97 a second, 300 frames asked for.
    @Test func aLoopedClipPlaysOnPastItsEnd() throws {
        let states = try Fixtures.temporaryFolder().appendingPathComponent("states.jsonl").path
        let run = try ToolRun.docktrack(["track", Fixtures.sample("carphone_pristine.mp4"), "--loop", "--end", "300", "-d", "mtcnn-face",
                                         "--no-face-cues", "--states", states])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(SubjectStatesRecord.self, from: Data($0.utf8))
        }
        #expect(records.count == 300 && records.last?.frame == 299, "\(records.count) frames")
        #expect(records.last.map { abs($0.time - 299 / 29.97) < 0.01 } == true, "timed on: \(records.last?.time ?? -1)")
        #expect(records[130].subjects.contains { $0.kind == .person }, "the face is found again in the second pass")
    }

    @Test func detectPrintsOneJSONLinePerFrame() throws {
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--end", "30", "--stride", "10", "-d", "hog-body"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.lines.count == 3)
        let records = try run.lines.map { try JSONDecoder().decode(DetectionRecord.self, from: Data($0.utf8)) }
        #expect(records.map(\.frame) == [0, 10, 20])
        #expect(records.map(\.time) == [0, 1, 2])
        #expect(records.allSatisfy { $0.size == ImageSize(width: 768, height: 576) })
        #expect(records.allSatisfy { !$0.observations.isEmpty && $0.observations.allSatisfy { $0.type == .humanBody } })
        #expect(run.stderr.isEmpty)
    }

    @Test func detectOnAnImageFindsTheFace() throws {
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg")])
        #expect(run.status == 0)
        let line = try #require(run.lines.first)
        #expect(line.hasPrefix(#"{"frame":0,"time":0.0,"width":548,"height":342,"observations":[{"type":"humanFace","rect":{"x":0.41"#))
        #expect(run.lines.count == 1)
    }

    @Test func thresholdFiltersObservations() throws {
        let loose = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--start", "100", "--end", "101", "-d", "hog-body", "--threshold", "0.1"])
        let strict = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--start", "100", "--end", "101", "-d", "hog-body", "--threshold", "0.99"])
        let count = { (run: ToolRun) in try JSONDecoder().decode(DetectionRecord.self, from: Data(run.lines[0].utf8)).observations.count }
        #expect(try count(loose) > count(strict))
    }

    @Test func aMissingFileIsOneLineAndAFailure() throws {
        let run = try ToolRun.docktrack(["detect", "/nonexistent/clip.mp4"])
        #expect(run.status == 1)
        #expect(run.errorLines == ["docktrack: /nonexistent/clip.mp4: no such file"])
        #expect(run.stdout.isEmpty)
    }

    @Test func aFileThatIsNotAVideoIsOneLineAndAFailure() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = folder.appendingPathComponent("notes.avi").path
        try "hello".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["detect", path])
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.stderr.contains("\(path): cannot be read"))
    }

    @Test func aTruncatedVideoKeepsWhatWasPrintedAndSaysWhereItStopped() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = try Fixtures.truncatedCopy(of: "vtest.avi", bytes: 4_000_000, in: folder)
        let run = try ToolRun.docktrack(["detect", path, "--stride", "50", "-d", "lbp-face"])
        #expect(run.status == 1)
        #expect(run.lines.count >= 7, "lines printed before the break: \(run.lines.count)")
        #expect(run.errorLines.count == 1)
        #expect(run.stderr.contains("video ends early, after"), "\(run.stderr)")
        #expect(run.stderr.contains("of the 795 frames it claims"))
    }

    @Test func anUnknownDetectorIsNamed() throws {
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "-d", "yolo"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("unknown detector 'yolo'"))
        #expect(run.stderr.contains("dnn-face"))
    }

    @Test func aMissingModelFolderIsNamed() throws {
        let empty = try Fixtures.temporaryFolder()
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "--models", empty.path])
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.stderr.contains("model file not found: \(empty.path)/pnet.onnx"), "the default's first model: \(run.stderr)")
        let res10 = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "-d", "dnn-face", "--models", empty.path])
        #expect(res10.status == 1)
        #expect(res10.stderr.contains("model file not found: \(empty.path)/res10_300x300_ssd_deploy.prototxt"))
    }

    /// A missing inference engine, or a person model it cannot read, is one line that says what
    /// to do; a detector that needs no engine runs without it.
    @Test func aMissingEngineOrAnUnreadableModelIsOneLine() throws {
        let empty = try Fixtures.temporaryFolder()
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg")], environment: ["DOCKTRACK_OPENVINO": empty.path])
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("the inference engine, OpenVINO 2026.4.1, cannot be loaded"), "\(run.stderr)")
        #expect(run.stderr.contains("libopenvino_c.so.2641 not found (looked in \(empty.path))"), "\(run.stderr)")
        let faces = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "-d", "mtcnn-face"],
                                          environment: ["DOCKTRACK_OPENVINO": empty.path])
        #expect(faces.status == 0 && faces.stdout.contains("humanFace"), "\(faces.stderr)")

        // A model file that is not a network: the engine's own reason, on one line.
        let models = try Fixtures.temporaryFolder()
        for file in try FileManager.default.contentsOfDirectory(atPath: Fixtures.models.modelsDirectory) {
            try FileManager.default.copyItem(atPath: Fixtures.models.model(file), toPath: models.appendingPathComponent(file).path)
        }
        let broken = models.appendingPathComponent("yolox_nano_person.onnx").path
        try FileManager.default.removeItem(atPath: broken)
        try Data("not a network".utf8).write(to: URL(fileURLWithPath: broken))
        let unreadable = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg"), "--models", models.path])
        #expect(unreadable.status == 1)
        #expect(unreadable.errorLines.count == 1, "\(unreadable.stderr)")
        #expect(unreadable.stderr.contains("model file cannot be loaded: \(broken)"), "\(unreadable.stderr)")
    }

    @Test func badOptionsAreUsageErrors() throws {
        for arguments in [["--threshold", "1.5"], ["--stride", "0"], ["--start", "5", "--end", "2"]] {
            let run = try ToolRun.docktrack(["detect", Fixtures.sample("messi5.jpg")] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.status)")
            #expect(run.stderr.contains("Error:"), "\(arguments)")
        }
    }

    @Test func helpListsTheDetectors() throws {
        let run = try ToolRun.docktrack(["detect", "--help"])
        #expect(run.status == 0)
        for name in DetectorCatalog.names { #expect(run.stdout.contains(name)) }
        #expect(run.stdout.contains("lower-left"))
    }

    @Test func annotatedVideoHasTheInputsSizeAndFrames() throws {
        let folder = try Fixtures.temporaryFolder()
        let out = folder.appendingPathComponent("annotated.mp4").path
        let run = try ToolRun.docktrack(["detect", Fixtures.sample("vtest.avi"), "--end", "12", "-d", "hog-body", "--annotate", out])
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try Fixtures.frames(of: out)
        #expect(frames.count == 12)
        #expect(frames.first?.size == ImageSize(width: 768, height: 576))
    }
}

/// `docktrack bench` as a user runs it, on few frames (its numbers are for people to read; here
/// the lines are checked to be there and plausible, never their speed).
@Suite(.onTestThreads) struct BenchCommandTests {
    static func value(_ line: String, before unit: String) -> Double? {
        guard let range = line.range(of: " " + unit) else { return nil }
        return Double(line[..<range.lowerBound].split(separator: " ").last ?? "")
    }

    /// A labelled folder as samples/ is, smaller: its three portraits and the first 24 frames of
    /// its clip with a face in every frame (the whole clip cost the test 7 s of res10).
    static func smallLabelledFolder() throws -> String {
        let folder = try Fixtures.temporaryFolder()
        let labels = try LabelledFaces(folder: Fixtures.root.appendingPathComponent("samples").path)
        var lines: [String] = []
        for (file, face) in labels.portraits {
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent(file).path, withDestinationPath: Fixtures.sample(file))
            lines.append("\(file)\t\(face.x)\t\(face.y)")
        }
        for file in labels.clips {
            var source = try MediaFile.open(Fixtures.sample(file))
            let name = (file as NSString).deletingPathExtension + ".avi"
            let output = try AnnotatedOutput(path: folder.appendingPathComponent(name).path, size: source.info.size,
                                             framesPerSecond: source.info.framesPerSecond ?? 25)
            for _ in 0..<24 { if let frame = try source.nextFrame() { try output.write(frame.image) } }
            output.close()
            lines.append(name)
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: folder.appendingPathComponent(LabelledFaces.fileName))
        return folder.path
    }

    @Test func benchPrintsEachPipelineTheRecallAndAResizedRun() throws {
        let run = try ToolRun.docktrack(["bench", Fixtures.sample("vtest.avi"), "--frames", "24", "--no-python", "--pipeline-detector", "fast",
                                         "--detect-every", "4", "--serial", "--recall", try Self.smallLabelledFolder()])
        #expect(run.status == 0, "\(run.stderr)")
        let ahead = try #require(run.lines.first { $0.hasPrefix("pipeline, detect every 4 (fast)") }, "\(run.stdout)")
        let serial = try #require(run.lines.first { $0.hasPrefix("pipeline, detect every 4, serial (fast)") }, "\(run.stdout)")
        for line in [ahead, serial] {
            #expect((Self.value(line, before: "fps") ?? 0) > 0, "\(line)")
            #expect((Self.value(line, before: "MB") ?? 0) > 50, "\(line)")
        }
        // Where the time goes: each detector part and each stage the pipeline runs, in ms a
        // frame; detection is most of it.
        let profile = try #require(run.lines.first { $0.hasPrefix("  where the time goes, ms a frame") }, "\(run.stdout)")
        var stages: [String: Double] = [:]
        for item in profile.dropFirst("  where the time goes, ms a frame".count).split(separator: ",") {
            let words = item.split(separator: " ")
            if let value = words.last.flatMap({ Double($0) }) { stages[words.dropLast().joined(separator: " ")] = value }
        }
        #expect(Set(stages.keys).isSuperset(of: ["camera shift", "tracking", "re-detection", "cues and ranking"]), "\(profile)")
        let detection = stages.filter { $0.key.hasPrefix("detect ") }.values.reduce(0, +)
        #expect(stages.keys.filter { $0.hasPrefix("detect ") }.count == 2 && detection > 0, "\(profile)")
        #expect(detection > stages["tracking"]! && stages.values.allSatisfy { $0 >= 0 && $0.isFinite }, "\(profile)")
        // The signatures read, by why, a frame each, and in all.
        let reads = try #require(run.lines.first { $0.hasPrefix("  signatures read a frame") }, "\(run.stdout)")
        let numbers = reads.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "(" }).compactMap { Double($0) }
        #expect(numbers.count == 6 && numbers.allSatisfy { $0 >= 0 } && abs(numbers[0..<5].reduce(0, +) - numbers[5]) < 0.01, "\(reads)")
        let recall = try #require(run.lines.first { $0.hasPrefix("face recall, fast") }, "\(run.stdout)")
        #expect(recall.contains("portraits 3/3") && recall.contains("frames 24/24"), "\(recall)")

        let resized = try ToolRun.docktrack(["bench", Fixtures.sample("carphone_pristine.mp4"), "--frames", "12", "--no-python", "--resize", "320x240"])
        #expect(resized.status == 0, "\(resized.stderr)")
        let input = try #require(resized.lines.first { $0.hasPrefix("input: ") }, "\(resized.stdout)")
        #expect(input.contains("input-320x240.mp4 320x240, 12 frames"), "\(input)")
        #expect(resized.stderr.contains("re-encoded at 320x240 (12 frames"), "\(resized.stderr)")
        // The re-encoded clip is gone afterwards.
        let file = String(input.dropFirst("input: ".count).split(separator: " ")[0])
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func benchSoakPrintsMemoryEachMinuteOfFrames() throws {
        let run = try ToolRun.docktrack(["bench", Fixtures.sample("carphone_pristine.mp4"), "--no-python", "--detect-every", "8",
                                         // The cheapest detector: the soak's lines are what is tested (dnn-face: 24 s of processor).
                                         "--pipeline-detector", "lbp-face", "--soak", "1.05"])
        #expect(run.status == 0, "\(run.stderr)")
        // 1890 frames of a 120-frame clip: looped 15 times; memory at minute 1 and at the end.
        #expect(run.lines.filter { $0.hasPrefix("soak, minute") }.count == 2, "\(run.stdout)")
        let summary = try #require(run.lines.first { $0.hasPrefix("soak, 1.05 minutes at 30 fps") }, "\(run.stdout)")
        #expect(summary.contains("1890 frames (input looped 15 times)"), "\(summary)")
    }

    @Test func badBenchInputIsOneLine() throws {
        let missing = try ToolRun.docktrack(["bench", "/nonexistent/clip.mp4", "--no-python"])
        #expect(missing.status == 1)
        #expect(missing.errorLines.count == 1, "\(missing.stderr)")
        for arguments in [["--repeat", "0"], ["--soak", "0"], ["--resize", "big"]] {
            let run = try ToolRun.docktrack(["bench", Fixtures.sample("vtest.avi")] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
        }
    }
}
