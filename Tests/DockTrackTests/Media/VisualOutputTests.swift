import DockTrack
import Foundation
import Testing

/// What people look at: annotated video, plots, the preview window's absence.
@Suite(.onTestThreads) struct VisualOutputTests {
    @Test func annotatedVideoHasTheInputsFramesAndSizeAndShowsTheBoxes() throws {
        let folder = try Fixtures.temporaryFolder()
        let video = folder.appendingPathComponent("tracked.mp4").path, states = folder.appendingPathComponent("states.jsonl").path
        let run = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--end", "20", "-d", "hog-body", "--no-face-cues",
                                         "--annotate", video, "--states", states])
        #expect(run.status == 0, "\(run.stderr)")
        let annotated = try Fixtures.frames(of: video)
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        var originals: [Frame] = []
        while originals.count < 20, let frame = try source.nextFrame() { originals.append(frame) }
        #expect(annotated.count == 20)
        #expect(annotated.allSatisfy { $0.size == ImageSize(width: 768, height: 576) })
        // Frame 10: the most salient subject's box is drawn in green, 3 px wide, on its left edge.
        let line = try String(contentsOfFile: states, encoding: .utf8).split(separator: "\n")[10]
        let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        let subject = try #require((record["subjects"] as! [[String: Any]]).first)
        let rect = subject["rect"] as! [String: Double]
        let box = UnitRect(x: rect["x"]!, y: rect["y"]!, width: rect["width"]!, height: rect["height"]!).pixelRect(in: annotated[10].size)
        let (x, y) = (Int(box.x.rounded()), Int((box.y + box.height / 2).rounded()))
        let drawn = annotated[10].image.pixel(x: x, y: y), plain = originals[10].image.pixel(x: x, y: y)
        let greenness = { (p: [UInt8]) in Int(p[1]) - (Int(p[0]) + Int(p[2])) / 2 }
        #expect(greenness(drawn) > 60 && greenness(drawn) > greenness(plain) + 40, "box pixel \(drawn), original \(plain)")
        // Far from every box (the lawn, bottom left) the picture is the input's, up to compression.
        let lawn = annotated[10].image.pixel(x: 200, y: 420), original = originals[10].image.pixel(x: 200, y: 420)
        #expect(zip(lawn, original).allSatisfy { abs(Int($0) - Int($1)) < 25 }, "\(lawn) vs \(original)")
    }

    /// The H.264 writer of FFmpeg's encoder API: what is written comes back (frame count, rate,
    /// pictures up to compression); sizes it cannot take are refused with a message, and the
    /// annotated output falls back to OpenCV's writer for them.
    @Test func encodedVideoComesBackAsWritten() throws {
        let folder = try Fixtures.temporaryFolder()
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        var originals: [Image] = []
        while originals.count < 30, let frame = try source.nextFrame() { originals.append(frame.image) }
        let path = folder.appendingPathComponent("encoded.mp4").path
        let file = try EncodedVideoFile(path: path, size: ImageSize(width: 768, height: 576), framesPerSecond: 12.5)
        #expect(file.codec == "libx264")
        for image in originals { try file.write(image) }
        try file.close()
        #expect(throws: OpenCVError.self, "a write after close is an error") { try file.write(originals[0]) }
        let decoded = try MediaFile.open(path)
        #expect(abs((decoded.info.framesPerSecond ?? 0) - 12.5) < 0.01)
        let frames = try Fixtures.frames(of: path)
        #expect(frames.count == 30)
        for k in [0, 15, 29] {
            let (a, b) = (frames[k].image.pixel(x: 300, y: 300), originals[k].pixel(x: 300, y: 300))
            #expect(zip(a, b).allSatisfy { abs(Int($0) - Int($1)) < 25 }, "frame \(k): \(a) vs \(b)")
        }
        for bad in [ImageSize(width: 767, height: 576), ImageSize(width: 0, height: 576), ImageSize(width: 40000, height: 2)] {
            #expect(throws: OpenCVError.self, "\(bad)") {
                try EncodedVideoFile(path: folder.appendingPathComponent("bad.mp4").path, size: bad, framesPerSecond: 25)
            }
        }
        #expect(throws: OpenCVError.self, "no such preset") {
            try EncodedVideoFile(path: folder.appendingPathComponent("preset.mp4").path, size: ImageSize(width: 64, height: 64),
                                 framesPerSecond: 25, preset: "warp")
        }
        for rate in [0, -1, Double.nan, .infinity] {
            #expect(throws: OpenCVError.self, "\(rate) frames a second") {
                try EncodedVideoFile(path: folder.appendingPathComponent("rate.mp4").path, size: ImageSize(width: 64, height: 64), framesPerSecond: rate)
            }
        }
        // Odd and tiny sizes still make a video, through OpenCV's writer.
        for size in [ImageSize(width: 175, height: 143), ImageSize(width: 2, height: 2)] {
            let odd = folder.appendingPathComponent("odd-\(size.width).mp4").path
            let output = try AnnotatedOutput(path: odd, size: size, framesPerSecond: 25)
            for image in originals.prefix(5) { try output.write(try image.resized(to: size)) }
            output.close()
            #expect(try Fixtures.frames(of: odd).count == 5, "\(size)")
        }
    }

    @Test func tracesArePlotted() throws {
        let folder = try Fixtures.temporaryFolder()
        let trace = folder.appendingPathComponent("trace.tsv").path, plot = folder.appendingPathComponent("plot.png").path
        let run = try ToolRun.docktrack(["simulate", Fixtures.sample("vtest.avi"), "--end", "30", "-d", "hog-body", "--no-face-cues", "--trace", trace])
        #expect(run.status == 0)
        let plotted = try ToolRun.docktrack(["plot", trace, "-o", plot])
        #expect(plotted.status == 0, "\(plotted.stderr)")
        let picture = try Image(contentsOf: plot)
        #expect(picture.size == ImageSize(width: 960, height: 3 * 180 + 24), "pan, tilt and speed panels")
        // Not blank: the pan curve crosses the first panel in the plot's blue.
        let blue = (0..<picture.width).flatMap { x in (26..<158).map { picture.pixel(x: x, y: $0) } }.filter { $0[0] > 150 && $0[2] < 80 }
        #expect(blue.count > 200)
    }

    @Test func badTracesAreReported() throws {
        let folder = try Fixtures.temporaryFolder()
        let junk = folder.appendingPathComponent("junk.tsv")
        try "hello\tworld\n1\t2\n".write(to: junk, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["plot", junk.path])
        #expect(run.status == 1 && run.stderr.contains("not a trace"))
        let missing = try ToolRun.docktrack(["plot", folder.appendingPathComponent("none.tsv").path])
        #expect(missing.status == 1 && missing.stderr.contains("no such file"))
    }

    @Test func previewWithoutADisplayIsAMessageNotACrash() throws {
        let run = try ToolRun.docktrack(["track", Fixtures.sample("messi5.jpg"), "-d", "dnn-face", "--no-face-cues", "--preview"],
                                        environment: ["DISPLAY": nil, "WAYLAND_DISPLAY": nil])
        #expect(run.status == 0)
        #expect(run.stderr.contains("--preview: no display (DISPLAY is not set); running without a preview"))
        #expect(run.lines.count == 2, "the frame's command and the stop at the end: \(run.lines)")
        #expect(PreviewWindow.unavailableReason(environment: ["DISPLAY": ":97"]) == "display :97 is not running")
    }
}
