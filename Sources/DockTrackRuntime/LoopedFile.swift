import DockTrackCore
import DockTrackMedia
import Foundation

/// A file played over and over, its frames numbered on and timed at `framesPerSecond`.
public final class LoopedFile: FrameSource {
    public let path: String
    public private(set) var source: any FrameSource
    public let framesPerSecond: Double
    public private(set) var index = 0
    /// Times the file was started again.
    public private(set) var loops = 0
    public var info: MediaInfo { source.info }

    public init(path: String, source: any FrameSource, framesPerSecond: Double) {
        self.path = path
        self.source = source
        self.framesPerSecond = framesPerSecond
    }

    public func nextFrame() throws(FrameSourceError) -> Frame? {
        var decoded = try source.nextFrame()
        if decoded == nil {
            source = try MediaFile.open(path)
            loops += 1
            decoded = try source.nextFrame()
        }
        guard let image = decoded?.image else { return nil }
        defer { index += 1 }
        return Frame(index: index, time: Double(index) / framesPerSecond, image: image)
    }
}
