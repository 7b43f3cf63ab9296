import DockTrackCore
import DockTrackMedia
import DockTrackSystem

/// One frame's result as a run hands it to its sinks: the frame, what the loop did with it, the
/// subjects' states as written, and how the framing is drawn over it.
struct FrameResult {
    var frame: Frame
    var step: FrameStep
    var record: SubjectStatesRecord
    var annotation: FrameAnnotation
}

/// Where a run's frame results go besides the dock: a states file, the control clients, the
/// annotated picture. The run hands every sink each frame's result, in the order given.
protocol FrameSink {
    /// Takes one frame's result; `false` ends the run (a preview window closed).
    mutating func take(_ result: FrameResult) throws -> Bool
}

/// `--states`: a JSON line per frame.
struct StatesFileSink: FrameSink {
    let file: LineOutput

    func take(_ result: FrameResult) throws -> Bool {
        try file.write(result.record.jsonLine)
        return true
    }
}

/// `--serve` and the control page: each frame's states and where the dock pointed.
struct ControlSink: FrameSink {
    let control: TrackControl

    func take(_ result: FrameResult) throws -> Bool {
        control.publish(result.record, motion: result.step.atCommand)
        return true
    }
}

/// The annotated picture: `--annotate`'s video, the preview window, and a page while someone
/// watches it. Drawn only when one of them wants it; the page alone gets a copy that it draws
/// off the frame loop.
struct PictureSink: FrameSink {
    let video: AnnotatedOutput?
    let window: PreviewWindow?
    /// The page, asked each frame whether someone watches.
    let viewer: () -> (any FrameViewer)?

    /// Whether the window was closed (the run ended there).
    private(set) var windowClosed = false

    mutating func take(_ result: FrameResult) throws -> Bool {
        let viewer = self.viewer().flatMap { $0.isWatched ? $0 : nil }
        guard video != nil || window != nil || viewer != nil else { return true }
        guard video != nil || window != nil else {
            viewer?.offer(try result.frame.image.copy(), annotation: result.annotation, index: result.frame.index)
            return true
        }
        let canvas = try Canvas(copying: result.frame.image)
        result.annotation.draw(on: canvas)
        try video?.write(canvas.image)
        // The page gets the canvas itself (written no more from here).
        viewer?.offer(canvas.image, annotation: nil, index: result.frame.index)
        if let window, !window.show(canvas.image) {
            windowClosed = true
            return false
        }
        return true
    }
}
