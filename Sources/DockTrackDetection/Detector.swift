import DockTrackCore
import DockTrackMedia
import CDockCV

/// Finds faces, bodies or objects in one image.
///
/// Detectors hold OpenCV models that are not safe to share between threads: one detector
/// belongs to one stage at a time.
public protocol Detector: AnyObject {
    /// The name it is selected by on the command line (`dnn-face`, `hog-body`, ...).
    var name: String { get }
    /// Observations whose confidence is at least `minimumConfidence`, in unit coordinates
    /// with the origin at the lower-left.
    func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation]
    /// Whether each thing it reports was checked by a second, stronger look (a person network
    /// over each body, MTCNN's output network over each face): a tracker then need not wait
    /// for a second sighting to believe it. `false` unless a detector says so.
    var checksWhatItFinds: Bool { get }
    /// As a part of a combined detector that found nothing, the most detection rounds it waits
    /// before it looks again (``IdlePartSchedule``); `nil`: the schedule's own (8). A cheap
    /// whole-picture look says less, so that a person walking in is found within a few rounds.
    var longestIdleInterval: Int? { get }
    /// Whether each of its runs looks at the whole picture for people of every size (a person
    /// network): a face is then only where it found a person, and a combined detector's face
    /// parts look there only (``IdlePartSchedule``). `false` unless a detector says so.
    var findsEveryPerson: Bool { get }
    /// Gets ready for pictures of `size` before the first one comes (a network compiled for
    /// that input), so that a live run's first look is not late; a model that cannot be read
    /// fails here. Nothing unless a detector needs it.
    func prepare(for size: ImageSize) throws(DetectorError)
    /// This round's observations, or `nil` when the detector passes the round over because
    /// nothing calls for a look (``IdlePartSchedule``): the frame is then one no detector ran
    /// on. ``detect(in:minimumConfidence:)`` unless a detector says otherwise.
    func lookIfNeeded(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation]?
}

extension Detector {
    public var checksWhatItFinds: Bool { false }
    public var longestIdleInterval: Int? { nil }
    public var findsEveryPerson: Bool { false }
    public func prepare(for size: ImageSize) throws(DetectorError) {}
    public func lookIfNeeded(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation]? {
        try detect(in: image, minimumConfidence: minimumConfidence)
    }
}

/// A detector that can be asked to look only for things at least so tall, for less: its cost is
/// in the small sizes (an image pyramid's largest levels), so skipping them saves most of it.
public protocol SizeLimitedDetector: Detector {
    /// As ``Detector/detect(in:minimumConfidence:)``, for things at least `smallestHeight` tall
    /// (a fraction of the image's height; smaller ones may still be reported).
    func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double) throws(DetectorError) -> [Observation]
}

/// A detector that can also be asked to look only where things may have appeared (around
/// ``MotionRegions`` and what it found last), for less: its cost grows with the area searched.
/// It implements one search; the whole-picture ones come from it.
public protocol RegionLimitedDetector: SizeLimitedDetector {
    /// As ``SizeLimitedDetector/detect(in:minimumConfidence:smallestHeight:)``, for things that
    /// overlap one of `regions` (unit coordinates, lower-left origin); no regions, no search;
    /// `nil`, the whole picture. Things elsewhere may still be reported.
    func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double, regions: [UnitRect]?) throws(DetectorError) -> [Observation]
}

/// A face detector with a cheaper look at the whole picture for the faces large enough for it
/// (MTCNN's: BlazeFace on the inference engine, each face checked by O-Net): a schedule takes
/// it for most of its whole-picture searches, and the detector's own full look (every size,
/// the small faces too) now and then.
public protocol QuickWholeFaceLook: Detector {
    /// The faces the quick look finds in the whole of `image`; `nil` when the detector has no
    /// quick look (its models or the engine missing): the full look runs instead.
    func quickWholeLook(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation]?
    /// The height of the smallest face the quick look finds surely in an image of `size`, as a
    /// fraction of its height.
    func smallestQuickFace(in size: ImageSize) -> Double
}

/// A face detector with a smallest face it finds. A standing person is 7 to 9 faces tall, so a
/// person found as a body shorter than ``bodiesWithFacesItFinds`` of those shows no face it
/// finds: where such a person moved, it need not look (``IdlePartSchedule``).
public protocol SmallestFaceDetector: Detector {
    /// The height of the smallest face it finds in an image of `size`, as a fraction of its height.
    func smallestFace(in size: ImageSize) -> Double
}

extension SmallestFaceDetector {
    /// How many of its smallest faces tall a body must be for its face to be found: 6, below a
    /// standing adult's 7 to 9 (a child's head is a larger part of its height).
    public static var bodiesWithFacesItFinds: Double { 6 }
}

extension RegionLimitedDetector {
    public func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        try detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: 0, regions: nil)
    }

    public func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double) throws(DetectorError) -> [Observation] {
        try detect(in: image, minimumConfidence: minimumConfidence, smallestHeight: smallestHeight, regions: nil)
    }
}

/// Why a detector could not be made or could not run.
public enum DetectorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name matches no detector.
    case unknownDetector(name: String, known: [String])
    /// A model file is not where it should be.
    case modelMissing(path: String, hint: String)
    /// A model file is there but OpenCV cannot load it.
    case modelUnreadable(path: String, reason: String)
    /// OpenCV failed while detecting.
    case failed(detector: String, reason: String)
    /// The frame is smaller than the detector can look at (after its own scaling).
    case frameTooSmall(detector: String, size: ImageSize, minimum: ImageSize)
    /// The inference engine (OpenVINO) cannot be loaded.
    case engineMissing(reason: String)

    public var description: String {
        switch self {
        case .unknownDetector(let name, let known):
            return "unknown detector '\(name)'; known: \(known.joined(separator: ", "))"
        case .modelMissing(let path, let hint):
            return "model file not found: \(path) (\(hint))"
        case .modelUnreadable(let path, let reason):
            return "model file cannot be loaded: \(path) (\(reason))"
        case .failed(let detector, let reason):
            return "detector \(detector) failed: \(reason)"
        case .frameTooSmall(let detector, let size, let minimum):
            return "frame too small for \(detector): \(size.width)x\(size.height) (it needs at least \(minimum.width)x\(minimum.height))"
        case .engineMissing(let reason):
            return "the inference engine, OpenVINO \(InferenceEngine.pinnedVersion), cannot be loaded: \(reason) "
                + "(make deps or tools/install-openvino.sh installs it into .openvino/; DOCKTRACK_OPENVINO names its libs folder)"
        }
    }
}

/// Capacity of the box buffer handed to the shim per call; more boxes than this in one image
/// are dropped (a crowd of 512 is beyond what a dock frames).
let detectionCapacity = 512

/// Calls a shim detection function with a box buffer and returns the boxes it wrote.
func detectBoxes(_ detector: String, _ call: (UnsafeMutablePointer<dcv_box>, Int32, UnsafeMutablePointer<dcv_status>) -> Int32) throws(DetectorError) -> [dcv_box] {
    var boxes = [dcv_box](repeating: dcv_box(), count: detectionCapacity)
    var status = dcv_status()
    let count = boxes.withUnsafeMutableBufferPointer { call($0.baseAddress!, Int32(detectionCapacity), &status) }
    if count < 0 { throw .failed(detector: detector, reason: OpenCVError(status).message) }
    return Array(boxes.prefix(Int(count)))
}

extension dcv_box {
    /// This box (pixels of an image of `size`) as unit coordinates, lower-left origin.
    package func unitRect(in size: ImageSize) -> UnitRect {
        UnitRect(PixelRect(x: Double(x), y: Double(y), width: Double(width), height: Double(height)), in: size)
    }
}

/// Opens a model through `open`, turning a missing file and a failed load into DetectorErrors.
func loadModel<Handle>(_ path: String, hint: String, _ open: (UnsafeMutablePointer<dcv_status>) -> Handle?) throws(DetectorError) -> Handle {
    guard ModelStore.fileExists(path) else { throw .modelMissing(path: path, hint: hint) }
    var status = dcv_status()
    guard let handle = open(&status) else {
        throw .modelUnreadable(path: path, reason: OpenCVError(status).message)
    }
    return handle
}

/// Runs an image operation inside a detector, reporting an OpenCV failure as the detector's.
package func preparing<T>(_ detector: String, _ body: () throws(OpenCVError) -> T) throws(DetectorError) -> T {
    do { return try body() } catch { throw .failed(detector: detector, reason: error.message) }
}
