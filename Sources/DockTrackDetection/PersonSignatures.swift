import CDockCV
import DockTrackCore
import DockTrackMedia

/// What a person looks like to a re-identification network: a direction in its embedding space
/// (unit length), compared by cosine. Unlike a clothing-colour histogram it tells apart two
/// people in similar clothes, and the same person seen from the side and from behind stays close.
///
/// Measured with OpenVINO's person-reidentification-retail-0248 on vtest.avi's labelled
/// people at least 50 px tall (one crop every 5 frames, frames 1-300): the same person 1 s later
/// is nearer than every other person present then in 0.991 of cases (0.975 with the colours in
/// RGB order: the network reads BGR). As a number alone a similarity says less: the same person
/// 1 s later scores 0.82 (median; 5% below 0.56), 5 s later 0.70 (5% below 0.45), two different
/// people 0.26 (median; 5% above 0.46, the highest 0.70). So a signature is compared among the few
/// people who could be the one seen, never against a fixed threshold alone.
package struct PersonSignature: Sendable, Equatable {
    package private(set) var values: [Float]

    /// `values` scaled to unit length; `nil` when they are not finite or all zero.
    package init?(_ values: [Float]) {
        var sum = 0.0
        for value in values { sum += Double(value) * Double(value) }
        guard sum.isFinite, sum > 0 else { return nil }
        let scale = Float(1 / sum.squareRoot())
        self.values = values.map { $0 * scale }
    }

    /// Cosine similarity: 1 for the same direction, 0 for unrelated, -1 opposite (0 for
    /// signatures of different lengths, which no network gives).
    package func similarity(to other: PersonSignature) -> Double {
        guard values.count == other.values.count else { return 0 }
        var sum: Float = 0
        for i in values.indices { sum += values[i] * other.values[i] }
        return Double(sum)
    }

    /// Moves this signature towards `new` by `rate` (0...1), staying of unit length: a running
    /// mean over sightings, steadier than any one of them.
    package mutating func blend(_ new: PersonSignature, rate: Double) {
        guard values.count == new.values.count else { return }
        let keep = Float(1 - rate), take = Float(rate)
        if let blended = PersonSignature(values.indices.map { values[$0] * keep + new.values[$0] * take }) { self = blended }
    }
}

/// Reads a person's signature from their body box in a frame.
package protocol PersonSignatureReader: AnyObject {
    /// The signature of the person whose body is `body` (unit coordinates, lower-left origin)
    /// in `image`.
    func signature(of body: UnitRect, in image: Image) throws(DetectorError) -> PersonSignature
    /// Signatures read so far (for the bench and tests).
    var reads: Int { get }
}

/// OpenVINO's person-reidentification-retail-0248 on the inference engine: a body crop
/// stretched to 128x256, BGR 0...255, planar (`models/person-reidentification-retail-0248-planar.onnx`:
/// the published model with its NHWC input made planar and its layout copies dropped by
/// `tools/trim-reid-input.py`, the same numbers), gives 256 numbers, computed in bf16 where the
/// processor has it (``precision``). Compiling it takes a few
/// hundred milliseconds: ``prepare()`` does it before a run (a live run's first look is then on
/// time: compiled at the first read, it held a real-time run's frame back long enough for its
/// people to move away from where a client had just seen them).
package final class ReidentificationNetwork: PersonSignatureReader {
    package static let modelFile = "person-reidentification-retail-0248-planar.onnx"
    /// bf16, the engine's own default on processors with it (these machines' AVX-512 has):
    /// 2.1 ms a crop against 2.8 in f32 on one core (openvino's Python API, best of five runs of
    /// 100; the planar model took 2.1 in f32 on a quieter day, 3.4 with the published NHWC input;
    /// batches of more than one crop do not load), and the signatures are the same to a cosine of
    /// 0.9992 on average, 0.9985 at worst (195 labelled walkers of vtest.avi, 50 px and taller).
    /// `eval --clip` on the five labelled clips gave the same numbers to the last digit, and
    /// `bench samples/vtest.avi --resize 1280x720` on one core 2.03 -> 1.49 ms a frame for
    /// identity (0.59 reads a frame). The 8-bit network moved signatures 15 times as far (0.985)
    /// and changed who a walker was taken for (docs/detection.md). (YOLOX-nano is faster in bf16
    /// too, but its scores move across its threshold: ``YOLOXPersonDetector/Params/precision``.)
    static let precision = InferenceEngine.Precision.bf16
    /// The network's input, fixed: 128 wide, 256 tall.
    static let inputSize = ImageSize(width: 128, height: 256)
    let name = "reidentification"
    private let modelPath: String
    private let hint: String
    private var compiled: EngineNetwork?
    package private(set) var reads = 0

    /// Checks that the model and the engine are there (a clear error at the start of a run).
    package init(models: ModelStore) throws(DetectorError) {
        modelPath = models.model(Self.modelFile)
        hint = models.modelsHint
        guard ModelStore.fileExists(modelPath) else { throw .modelMissing(path: modelPath, hint: hint) }
        _ = try InferenceEngine.shared()
    }

    /// Compiles the network now rather than at the first read.
    package func prepare() throws(DetectorError) {
        _ = try network()
    }

    private func network() throws(DetectorError) -> EngineNetwork {
        if let compiled { return compiled }
        let network = try InferenceEngine.shared().network(model: modelPath, inputShape: [1, 3, Self.inputSize.height, Self.inputSize.width],
                                                           threads: 1, precision: Self.precision, hint: hint)
        compiled = network
        return network
    }

    package func signature(of body: UnitRect, in image: Image) throws(DetectorError) -> PersonSignature {
        let box = body.pixelRect(in: image.size)
        let network = try network()
        guard box.width >= 1, box.height >= 1, network.input.count == 3 * Self.inputSize.width * Self.inputSize.height else {
            throw .failed(detector: name, reason: "no body to read a signature from")
        }
        var status = dcv_status()
        let width = Int32(Self.inputSize.width), height = Int32(Self.inputSize.height)
        let filled = dcv_image_planar_input(image.handle, Float(box.x), Float(box.y), Float(box.width), Float(box.height),
                                            width, height, width, height, 0, network.input.baseAddress, &status)
        if filled != 0 { throw .failed(detector: name, reason: OpenCVError(status).message) }
        try network.run(detector: name)
        reads += 1
        let (values, _) = try network.output(0, detector: name)
        guard let signature = PersonSignature(Array(values)) else {
            throw .failed(detector: name, reason: "the network gave no usable signature")
        }
        return signature
    }
}
