import DockTrackCore
import DockTrackMedia
import Foundation

/// A file played over and over, its frames numbered on and timed at `framesPerSecond`.
package final class LoopedFile: FrameSource {
    package let path: String
    package private(set) var source: any FrameSource
    package let framesPerSecond: Double
    package private(set) var index = 0
    /// Times the file was started again.
    package private(set) var loops = 0
    package var info: MediaInfo { source.info }

    package init(path: String, source: any FrameSource, framesPerSecond: Double) {
        self.path = path
        self.source = source
        self.framesPerSecond = framesPerSecond
    }

    package func nextFrame() throws(FrameSourceError) -> Frame? {
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
