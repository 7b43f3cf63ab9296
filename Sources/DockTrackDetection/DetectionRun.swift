import DockTrackCore
import DockTrackMedia

/// failure midway throws after every record before it was handed out.
package struct DetectionRun {
    package var minimumConfidence: Double
    package var selection: FrameSelection

    package init(minimumConfidence: Double = 0.5, selection: FrameSelection = FrameSelection()) {
        self.minimumConfidence = minimumConfidence
        self.selection = selection
    }

    /// Runs to the end of the selection. `each` gets every record with its frame (for drawing).
    package func run(source: inout some FrameSource, detector: any Detector,
                    each: (DetectionRecord, Frame) throws -> Void) throws {
        try selection.forEachFrame(of: &source) { frame in
            let observations = try detector.detect(in: frame.image, minimumConfidence: minimumConfidence)
            try each(DetectionRecord(frame: frame.index, time: frame.time, size: frame.size, observations: observations), frame)
        }
    }
}
