import DockTrackCore
import DockTrackMedia
import DockTrackDetection
import CDockCV
import Foundation

/// Follows one object the caller pointed at (no detector knows it) from frame to frame with
/// OpenCV's CSRT correlation-filter tracker (KCF, 4x faster, lost the coin of motion.mov within
/// 45 frames; CSRT followed it through all 242).
package final class VisualObjectTracker {
    package let id: UUID
    private let tracker: OpaquePointer
    package private(set) var rect: UnitRect
    package private(set) var firstSeen: Double
    package private(set) var lastSeen: Double

    /// The smallest box side (pixels) an object can be tracked from.
    package static let minimumBoxSide = 4.0

    /// Starts on `rect` (unit coordinates, lower-left origin) in `frame`.
    package init(id: UUID, rect: UnitRect, in frame: Frame) throws(DetectorError) {
        var status = dcv_status()
        guard let tracker = dcv_tracker_create(Int32(DCV_TRACKER_CSRT.rawValue), &status) else {
            throw .failed(detector: "object tracker", reason: OpenCVError(status).message)
        }
        self.tracker = tracker
        self.id = id
        self.rect = rect
        firstSeen = frame.time
        lastSeen = frame.time
        let box = rect.pixelRect(in: frame.size)
        // CSRT asserts inside OpenCV on a box under a pixel; a few pixels is the least it can follow.
        guard box.width >= Self.minimumBoxSide, box.height >= Self.minimumBoxSide else {
            throw .failed(detector: "object tracker", reason: String(format: "the box is %.1fx%.1f px on a %dx%d frame; it must be at least %gx%g px",
                                                                   box.width, box.height, frame.size.width, frame.size.height, Self.minimumBoxSide, Self.minimumBoxSide))
        }
        if dcv_tracker_start(tracker, frame.image.handle, Float(box.x), Float(box.y), Float(box.width), Float(box.height), &status) < 0 {
            throw .failed(detector: "object tracker", reason: OpenCVError(status).message)
        }
    }

    deinit { dcv_tracker_destroy(tracker) }

    /// Follows the object into `frame`; `false` when it was not found there (the last rect stays).
    package func update(_ frame: Frame) throws(DetectorError) -> Bool {
        var box = dcv_box()
        var status = dcv_status()
        let result = dcv_tracker_update(tracker, frame.image.handle, &box, &status)
        if result < 0 { throw .failed(detector: "object tracker", reason: OpenCVError(status).message) }
        guard result > 0 else { return false }
        rect = box.unitRect(in: frame.size)
        lastSeen = frame.time
        return true
    }
}
