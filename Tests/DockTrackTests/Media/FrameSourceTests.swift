import DockTrack
import Foundation
import Testing

@Suite(.onTestThreads) struct FrameSourceTests {
    @Test func videoFramesCarrySizeIndexAndTime() throws {
        var source = try MediaFile.open(Fixtures.sample("vtest.avi"))
        #expect(source.info.size == ImageSize(width: 768, height: 576))
        #expect(source.info.framesPerSecond == 10)
        let first = try #require(try source.nextFrame())
        #expect(first.index == 0 && first.time == 0 && first.size == source.info.size)
        #expect(try source.skipFrame())
        let third = try #require(try source.nextFrame())
        #expect(third.index == 2 && abs(third.time - 0.2) < 1e-9)
    }

    @Test func anImageIsOneFrame() throws {
        let frames = try Fixtures.frames(of: Fixtures.sample("messi5.jpg"))
        #expect(frames.count == 1)
        #expect(frames[0].size == ImageSize(width: 548, height: 342))
        #expect(frames[0].image.channels == 3)
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: FrameSourceError.fileNotFound(path: "/nonexistent/clip.mp4")) {
            try MediaFile.open("/nonexistent/clip.mp4")
        }
    }

    @Test func aFileThatIsNotAVideoIsRejected() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = folder.appendingPathComponent("notes.mp4").path
        try "this is not a video".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try MediaFile.open(path)
        } throws: { error in
            if case FrameSourceError.unreadable(let p, _) = error { return p == path }
            return false
        }
        let image = folder.appendingPathComponent("photo.jpg").path
        try "not a jpeg".write(toFile: image, atomically: true, encoding: .utf8)
        #expect(throws: FrameSourceError.self) { try MediaFile.open(image) }
        #expect(throws: FrameSourceError.self) { try MediaFile.open(folder.path) }
    }

    @Test func aTruncatedVideoKeepsItsFramesAndSaysWhereItStopped() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = try Fixtures.truncatedCopy(of: "vtest.avi", bytes: 4_000_000, in: folder)
        var source = try MediaFile.open(path)
        var frames = 0
        var failure: FrameSourceError?
        do {
            while try source.nextFrame() != nil { frames += 1 }
        } catch {
            failure = error
        }
        #expect(failure == .truncated(path: path, framesRead: frames, expected: 795))
        #expect(frames > 300 && frames < 500)
    }

    @Test func truncatedMp4WithoutIndexCannotBeOpened() throws {
        let folder = try Fixtures.temporaryFolder()
        let path = try Fixtures.truncatedCopy(of: "carphone_pristine.mp4", bytes: 300_000, in: folder)
        #expect(throws: FrameSourceError.self) { try MediaFile.open(path) }
    }

    @Test func containerFrameCountsAreToleratedWithinAFewFrames() {
        // motion.mov claims 243 frames and holds 242.
        #expect(!VideoFileSource.endsEarly(read: 242, expected: 243))
        #expect(VideoFileSource.endsEarly(read: 391, expected: 795))
    }

    @Test func sequencesOfImagesPlayInOrder() throws {
        let image = try Image(contentsOf: Fixtures.sample("messi5.jpg"))
        var source = FrameSequenceSource(images: [image, image, image], framesPerSecond: 10)
        var times: [Double] = []
        while let frame = try source.nextFrame() { times.append(frame.time) }
        #expect(times == [0, 0.1, 0.2])
    }
}
