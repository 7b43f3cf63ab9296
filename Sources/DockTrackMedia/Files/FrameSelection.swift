import Foundation

/// Which frames of an input to process: a range and a stride.
public struct FrameSelection: Sendable, Equatable {
    /// The first frame processed (0-based).
    public var start: Int
    /// One past the last frame processed; `nil` runs to the end.
    public var end: Int?
    /// Process every `stride`-th frame from `start`.
    public var stride: Int

    public init(start: Int = 0, end: Int? = nil, stride: Int = 1) {
        self.start = start
        self.end = end
        self.stride = max(1, stride)
    }

    /// Whether frame `index` is processed.
    public func includes(_ index: Int) -> Bool {
        index >= start && (end.map { index < $0 } ?? true) && (index - start) % stride == 0
    }

    /// How many frames of an input `total` frames long are processed.
    public func count(of total: Int) -> Int {
        max(0, (min(total, end ?? total) - start + stride - 1) / stride)
    }

    /// Whether no frame at or after `index` is processed.
    public func isFinished(at index: Int) -> Bool {
        end.map { index >= $0 } ?? false
    }
}

extension FrameSelection {
    /// Calls `body` with each selected frame of `source`, skipping the others without
    /// converting their pixels, until the selection or the source ends, or `stopping` says so
    /// (asked before each frame is read: a live run's Ctrl-C or time limit).
    package func forEachFrame(of source: inout some FrameSource, _ body: (Frame) throws -> Void,
                             stopping: () -> Bool = { false }) throws {
        var index = 0
        while !isFinished(at: index) && !stopping() {
            if includes(index) {
                guard let frame = try source.nextFrame() else { break }
                try body(frame)
            } else {
                guard try source.skipFrame() else { break }
            }
            index += 1
        }
        if index < start && !stopping() { throw FrameSourceError.startPastEnd(start: start, frames: index) }
    }
}

/// Runs a detector over the selected frames of a source and hands each frame's record out.
///
/// Frames outside the selection are skipped without converting their pixels. A decoding
