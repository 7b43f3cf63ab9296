import DockTrack
import DockTrackFuzzing
import Foundation
import Testing

/// The fuzz targets' checks over their seed corpus (Fuzz/corpus), as `make fuzz` starts them: a
/// change that breaks a check on a known input fails here, without a fuzzing build.
@Suite(.onTestThreads) struct FuzzCorpusTests {
    static func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = Fixtures.root.appendingPathComponent("Fuzz/corpus/\(target)")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            (name, Array(try Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    @Test(arguments: ["dock-protocol", "observations", "http-reply", "mjpeg-parts", "serve-requests", "config-file", "page-requests",
                            "dock-replies", "batch-result", "trace-plot", "overview-calibration"])
    func theSeedCorpusPassesTheFuzzChecks(target: String) throws {
        let inputs = try Self.corpus(target)
        #expect(inputs.count >= 5, "\(target): \(inputs.count) seeds")
        for input in inputs {
            // A check that fails is this input's recorded failure, not a trap that ends the suite.
            let name = input.name
            FuzzTargets.$failureReporter.withValue({ message, file, line in
                Issue.record("\(target)/\(name): \(message) (\(file):\(line))")
            }) {
                input.bytes.withUnsafeBufferPointer { bytes in
                    switch target {
                    case "dock-protocol": FuzzTargets.dockProtocol(bytes)
                    case "http-reply": FuzzTargets.httpReply(bytes)
                    case "mjpeg-parts": FuzzTargets.mjpegParts(bytes)
                    case "serve-requests": FuzzTargets.serveRequests(bytes)
                    case "config-file": FuzzTargets.configFile(bytes)
                    case "page-requests": FuzzTargets.pageRequests(bytes)
                    case "dock-replies": FuzzTargets.dockReplies(bytes)
                    case "batch-result": FuzzTargets.batchResult(bytes)
                    case "trace-plot": FuzzTargets.tracePlot(bytes)
                    case "overview-calibration": FuzzTargets.overviewCalibration(bytes)
                    default: FuzzTargets.observations(bytes)
                    }
                }
            }
        }
    }

    /// The stream picture reader's seeds say what they hold: a 16x16 picture decodes; one whose
    /// header claims 32000x32000, or one pixel row and column past the limit, is passed over.
    @Test func aStreamPictureClaimingTooManyPixelsIsPassedOverAndTheNextDecoded() throws {
        let folder = Fixtures.root.appendingPathComponent("Fuzz/corpus/mjpeg-parts")
        let boundary = Array("\r\n--part\r\n".utf8)
        func parts(_ name: String) throws -> [[UInt8]] {
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
            var parts: [[UInt8]] = [], start = 0, i = 0
            while i + boundary.count <= bytes.count {
                if Array(bytes[i..<i + boundary.count]) == boundary { parts.append(Array(bytes[start..<i])); i += boundary.count; start = i } else { i += 1 }
            }
            return parts + [Array(bytes[start...])]
        }
        func decoded(_ part: [UInt8]) -> ImageSize? { part.withUnsafeBytes { Image.decodingStreamPicture($0)?.size } }
        #expect(try decoded(parts("seed-picture")[0]) == ImageSize(width: 16, height: 16))
        let bomb = try parts("seed-bomb-then-good")
        #expect(decoded(bomb[0]) == nil, "32000x32000 claimed")
        #expect(decoded(bomb[1]) == ImageSize(width: 16, height: 16))
        #expect(try decoded(parts("seed-just-over-then-under")[0]) == nil, "7241x7241 is past 50 megapixels")
        #expect(decoded([]) == nil && decoded([0xFF, 0xD8]) == nil)
        // Found by the fuzzer: a frame header claiming 32000x32000 after bytes that are not a
        // marker (libjpeg skips them; the header walk stopped there and let it through).
        #expect(try decoded(parts("regression-frame-header-after-garbage")[0]) == nil)
        // Found by the fuzzer: an APP0 segment whose length is 1, then a frame header claiming
        // 32000x32000 (libjpeg reads on past such a length; the header walk stopped there).
        #expect(try decoded(parts("regression-short-segment-length")[0]) == nil)
        // Found by the fuzzer: a part OpenCV took for DICOM, whose decoder (GDCM) aborted the
        // process on it. Only JPEG is decoded from a stream now.
        #expect(try parts("regression-dicom-part").allSatisfy { decoded($0) == nil || $0.starts(with: [0xFF, 0xD8, 0xFF]) })
    }

    /// A photo whose metadata holds bytes that look like a frame header (an EXIF or ICC block
    /// with FF C0 and a large size in it, as editors and cameras write) is read: the size checked
    /// is the frame header libjpeg decodes, found segment by segment. The real header still
    /// counts when it claims too much, and one after garbage bytes too.
    @Test func aPhotoWithMetadataThatLooksLikeAFrameHeaderIsRead() throws {
        let photo = Array(try Data(contentsOf: URL(fileURLWithPath: Fixtures.sample("messi5.jpg"))))
        #expect(photo[0] == 0xFF && photo[1] == 0xD8)
        // APP1 "Exif\0\0" whose payload holds FF C0 00 11 08 7D00 7D00 (32000x32000), and an APP2.
        let fake: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x7D, 0x00, 0x7D, 0x00, 0x03]
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let exif = segment(0xE1, Array("Exif".utf8) + [0, 0] + Array(repeating: 0x20, count: 40) + fake + Array(repeating: 0x20, count: 40))
        let icc = segment(0xE2, Array("ICC_PROFILE".utf8) + [0, 1, 1] + fake + fake)
        let folder = try Fixtures.temporaryFolder()
        let edited = folder.appendingPathComponent("edited.jpg")
        try Data(Array(photo[0..<2]) + exif + icc + Array(photo[2...])).write(to: edited)
        #expect(try ImageFileSource(path: edited.path).info.size == ImageSize(width: 548, height: 342))
        let run = try ToolRun.docktrack(["detect", edited.path])
        #expect(run.status == 0 && run.stdout.contains("humanFace"), "\(run.stderr)")
        // The frame header itself claiming 32000x32000 (after the metadata): refused.
        let sof = try #require((2..<photo.count - 1).first { photo[$0] == 0xFF && (0xC0...0xC2).contains(photo[$0 + 1]) })
        var claiming = photo
        claiming[sof + 5] = 0x7D; claiming[sof + 6] = 0x00; claiming[sof + 7] = 0x7D; claiming[sof + 8] = 0x00
        let bomb = folder.appendingPathComponent("claiming.jpg")
        try Data(Array(claiming[0..<2]) + exif + Array(claiming[2...])).write(to: bomb)
        #expect(throws: FrameSourceError.self) { _ = try ImageFileSource(path: bomb.path) }
    }

    /// A video of frames past the picture limit (Motion JPEG AVI, 8000x7000: a small file, 56
    /// megapixels a frame) is refused when opened, as a picture is, before any frame is tracked.
    @Test func aVideoOfHugeFramesIsRefused() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = folder.appendingPathComponent("huge.avi").path
        let size = ImageSize(width: 8000, height: 7000)
        do {
            let out = try AnnotatedOutput(path: path, size: size, framesPerSecond: 10)
            let small = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
            let frame = try Image.composed(size: size, placing: [(small, PixelPoint(x: 100, y: 100))])
            for _ in 0..<2 { try out.write(frame) }
            out.close()
        }
        let run = try ToolRun.docktrack(["track", path, "--states", "/dev/null"])
        #expect(run.status == 1 && run.stderr.contains("larger than 50 megapixels"), "\(run.status) \(run.stderr)")
    }

    /// An image file is checked as a stream's picture is: a 543-byte JPEG claiming 32000x32000
    /// is refused at once (imread took 4.2 GB and 11 s to decode it); a PNG's and a BMP's
    /// declared sizes are read too.
    @Test func anImageFileClaimingTooManyPixelsIsRefusedBeforeItIsDecoded() throws {
        let folder = try Fixtures.temporaryFolder()
        let bytes = Array(try Data(contentsOf: Fixtures.root.appendingPathComponent("Fuzz/corpus/mjpeg-parts/seed-bomb-then-good")))
        let bomb = folder.appendingPathComponent("bomb.jpg")
        try Data(bytes[0..<543]).write(to: bomb)
        #expect(throws: FrameSourceError.self) { _ = try ImageFileSource(path: bomb.path) }
        let run = try ToolRun.docktrack(["detect", bomb.path])
        #expect(run.status == 1 && run.stderr.contains("claims more than 50 megapixels"), "\(run.stderr)")
        // A PNG header claiming 20000x20000 (nothing after it).
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]
        png += [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20, 8, 2, 0, 0, 0]
        let pngFile = folder.appendingPathComponent("bomb.png")
        try Data(png).write(to: pngFile)
        #expect(throws: FrameSourceError.self) { _ = try ImageFileSource(path: pngFile.path) }
        #expect(try ImageFileSource(path: Fixtures.sample("messi5.jpg")).info.size == ImageSize(width: 548, height: 342))
        // A picture format DockTrack does not read (a DICOM file named .jpg: 128 bytes, then DICM) is refused
        // before OpenCV's decoders see it.
        let dicom = folder.appendingPathComponent("scan.jpg")
        try Data([UInt8](repeating: 0, count: 128) + Array("DICM".utf8) + [UInt8](repeating: 0x02, count: 64)).write(to: dicom)
        let refused = try ToolRun.docktrack(["detect", dicom.path])
        #expect(refused.status == 1 && refused.stderr.contains("not a picture format DockTrack reads"), "\(refused.stderr)")
        #expect(try ImageFileSource(path: Fixtures.sample("astronaut.png")).info.size.width > 0)
    }
}
