import DockTrackCore
import DockTrackDetection
import DockTrackMedia
import Foundation

/// A detector that finds what its script says, with no model: the script gets the number of the
/// call (from 0) and the image, and returns the observations (unit coordinates, lower-left
/// origin). It counts its calls and the sizes it was shown, and can fail on a given call.
public final class ScriptedDetector: Detector, @unchecked Sendable {
    public let name: String
    private let script: (Int, Image) -> [Observation]
    private let lock = NSLock()
    private var _calls = 0
    private var _sizes: [ImageSize] = []
    /// The call (from 0) that throws ``DetectorError/failed(detector:reason:)``, if any.
    public let failingCall: Int?
    /// Whether it stands for a person network (``Detector/findsEveryPerson``); set before use.
    public var findsEveryPerson = false

    public init(name: String = "scripted", failingCall: Int? = nil, _ script: @escaping (_ call: Int, _ image: Image) -> [Observation]) {
        self.name = name
        self.failingCall = failingCall
        self.script = script
    }

    /// A detector that finds the same observations in every image.
    public convenience init(name: String = "scripted", always observations: [Observation]) {
        self.init(name: name) { _, _ in observations }
    }

    /// Calls so far.
    public var calls: Int { lock.withLock { _calls } }
    /// The size of the image of each call, in order.
    public var sizes: [ImageSize] { lock.withLock { _sizes } }

    public func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let call = lock.withLock {
            defer { _calls += 1; _sizes.append(image.size) }
            return _calls
        }
        if call == failingCall { throw .failed(detector: name, reason: "scripted failure on call \(call)") }
        return script(call, image).filter { $0.confidence >= minimumConfidence }
    }
}

extension Frame {
    /// A plain gray frame of `size` (BGR), for stages that need a picture but not what is in it.
    public static func blank(index: Int, time: Double, size: ImageSize = ImageSize(width: 64, height: 48)) throws(OpenCVError) -> Frame {
        let pixels = [UInt8](repeating: 128, count: max(0, size.width * size.height * 3))
        return Frame(index: index, time: time, image: try Image(pixels: pixels, width: size.width, height: size.height, channels: 3))
    }
}
