import CDockCV
import DockTrackCore
import DockTrackMedia
import Foundation

/// People with YOLOX-nano (COCO's person class; `models/yolox_nano_person.onnx`, Apache-2.0)
/// on the inference engine: the whole picture in one look, its longer side scaled to
/// ``Params/longSide``, its shorter side to the nearest multiple of 32 (the network is reshaped
/// to the picture's aspect, not letterboxed into a square; ``inputGeometry(for:)``). It sees a 20 px
/// walker in a 360x270 stream and a close-up alike, and no person in a dog, a sign or a bike.
///
/// Measured on the project's labelled clips (docs/detection.md): at long side 416 and score 0.6,
/// 0.931 of vtest's walkers at 360x270 with 0.010 false people a frame, 0.964 of bikes.mp4.
package final class YOLOXPersonDetector: Detector {
    package struct Params: Sendable, Equatable {
        /// The network input's longer side (px; a multiple of 32). 416, as trained: at 320 it
        /// finds 0.908 of vtest's walkers at 360x270 for about half the time.
        package var longSide = 416
        /// The most the picture's shape may change to fit the input's multiples of 32 without
        /// padding (a person 4% thinner is still a person): 1280x720 at 416x224 rather than
        /// 416x234 padded to 256 costs an eighth less a look.
        package var largestStretch = 0.05
        /// The lowest person score reported, whatever the caller asks (the caller's
        /// `minimumConfidence` raises it): below 0.6 nearly all of vtest's false people are one
        /// box on the blue sign at the left.
        package var minimumScore = 0.6
        /// Of two boxes overlapping more than this (intersection over union), the weaker is
        /// dropped (YOLOX's own 0.45).
        package var suppressionOverlap = 0.45
        /// Threads the engine computes one look with (0: the engine's choice). 1: detection runs
        /// beside the frame thread on a 2-core machine.
        package var threads = 1
        /// f32: the scores are the model's own (the parts of the 8-bit network that stay in
        /// floating point run in f32 too). bf16 is faster on this project's 2-core machines
        /// (AVX-512 with bf16: 6.2 against 8.8 ms a look at 416x224) but moves scores across the
        /// threshold: bikes.mp4 0.060 false people a frame against 0.032 (docs/detection.md).
        package var precision = InferenceEngine.Precision.f32
        /// The network with 8-bit weights and activations (``eightBitModelFile``, detector
        /// `yolox-body-int8`): 4.9 ms a look at 416x224 on one core against 8.6 for the f32 one
        /// (VNNI), but its scores are a little lower and noisier: on the labelled clips it misses
        /// more of the small walkers and reports more false people than the f32 network
        /// (docs/detection.md), so it is not the default.
        package var eightBit = false
        /// The most detection rounds it rests in a combined detector when it found nobody
        /// (``Detector/longestIdleInterval``). On bikes.mp4, where a man crosses the picture in
        /// 15 frames, the schedule's own 8 rounds (32 frames) missed him.
        package var longestIdleInterval = 1
        package init() {}
    }

    /// YOLOX-nano without its first layer, the Focus slicing: the detector folds the picture
    /// into the 12 channels that layer made as it fills the input (`dcv_image_folded_input`),
    /// which costs nothing more than filling it planar; the engine ran the slicing with its
    /// reference kernels, 1.1 ms of an 8.1 ms look at 416x224 on one core. And without the
    /// 79 classes that are not COCO's person (`tools/yolox-person-only.py`): its output is the
    /// 6 numbers an anchor the detector reads, planar, 7.2 -> 6.8 ms a look.
    package static let modelFile = "yolox_nano_person.onnx"
    /// The same network quantized to 8 bits by `tools/quantize-int8.py` (NNCF, calibrated on
    /// pictures that are none of the clips `eval` scores), OpenVINO's own format.
    package static let eightBitModelFile = "yolox_nano_person_int8.xml"
    /// The output's rows: box centre x, y, log width, log height, objectness, person score.
    static let outputRows = 6
    /// The padding grey YOLOX was trained with.
    static let padValue: Float = 114
    /// Below this (px, either side) a picture holds nobody to find.
    static let smallestPicture = ImageSize(width: 16, height: 16)

    package let name: String
    package let params: Params
    private let modelPath: String
    private let hint: String
    /// The network compiled for the last input size asked for (a stream keeps one size).
    private var network: (input: ImageSize, network: EngineNetwork)?
    /// Looks taken so far (for the bench and tests).
    package private(set) var looks = 0

    package init(models: ModelStore, params: Params = Params()) throws(DetectorError) {
        self.params = params
        name = params.eightBit ? "yolox-body-int8" : "yolox-body"
        modelPath = models.model(params.eightBit ? Self.eightBitModelFile : Self.modelFile)
        hint = models.modelsHint
        guard ModelStore.fileExists(modelPath) else { throw .modelMissing(path: modelPath, hint: hint) }
        _ = try InferenceEngine.shared()
    }

    /// Each body is the person network's own verdict.
    package var checksWhatItFinds: Bool { true }
    /// Its look is cheap and covers the whole picture: with nobody in view it still looks every
    /// other round (8 frames at track's schedule), so a person walking in is framed at once.
    package var longestIdleInterval: Int? { params.longestIdleInterval }
    /// Each look covers the whole picture at every size.
    package var findsEveryPerson: Bool { true }

    /// Compiles the network for pictures of `size` (a live run's first look is then on time).
    package func prepare(for size: ImageSize) throws(DetectorError) {
        guard size.width >= Self.smallestPicture.width, size.height >= Self.smallestPicture.height else { return }
        _ = try network(for: inputGeometry(for: size).input)
    }

    /// The network's input for a picture of `size`: the scaled picture (`content`, at the
    /// input's top-left), the input it sits in (each side a multiple of 32) and the scale from
    /// picture to input pixels on each axis. The longer side is ``Params/longSide``; the shorter
    /// side is scaled by as much and then squeezed to the multiple of 32 below when that changes
    /// the picture's shape by at most ``Params/largestStretch`` (1280x720 looks at 416x224, no
    /// padding), else padded up to the next (768x576: 416x312 padded to 416x320). Stretching
    /// 768x576 to 416x320 instead saves nothing and cost vtest.avi 0.02 more false people a
    /// frame in `eval`.
    package func inputGeometry(for size: ImageSize) -> (content: ImageSize, input: ImageSize, scaleX: Double, scaleY: Double) {
        let width = Double(max(size.width, 1)), height = Double(max(size.height, 1))
        let scale = Double(params.longSide) / max(width, height)
        func side(_ pixels: Double) -> (content: Int, input: Int) {
            let scaled = max(1, min(Double(params.longSide), (pixels * scale).rounded()))
            let below = max(32, (scaled / 32).rounded(.down) * 32)
            if (scaled - below) / scaled <= params.largestStretch { return (Int(below), Int(below)) }
            return (Int(scaled), max(32, (Int(scaled) + 31) / 32 * 32))
        }
        let (contentWidth, inputWidth) = side(width), (contentHeight, inputHeight) = side(height)
        return (ImageSize(width: contentWidth, height: contentHeight), ImageSize(width: inputWidth, height: inputHeight),
                Double(contentWidth) / width, Double(contentHeight) / height)
    }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let size = image.size
        guard size.width >= Self.smallestPicture.width, size.height >= Self.smallestPicture.height else {
            throw .frameTooSmall(detector: name, size: size, minimum: Self.smallestPicture)
        }
        let geometry = inputGeometry(for: size)
        let network = try network(for: geometry.input)
        var status = dcv_status()
        let filled = dcv_image_folded_input(image.handle, 0, 0, Float(size.width), Float(size.height),
                                            Int32(geometry.content.width), Int32(geometry.content.height),
                                            Int32(geometry.input.width), Int32(geometry.input.height),
                                            Self.padValue, network.input.baseAddress, &status)
        if filled != 0 { throw .failed(detector: name, reason: OpenCVError(status).message) }
        try network.run(detector: name)
        looks += 1
        let (values, shape) = try network.output(0, detector: name)
        let threshold = max(params.minimumScore, minimumConfidence.isFinite ? minimumConfidence : 0)
        let boxes = try Self.decode(values, shape: shape, input: geometry.input, threshold: threshold, detector: name)
        // Input pixels to picture pixels, then to unit coordinates (Geometry's one conversion).
        let found = boxes.map { box in
            let rect = PixelRect(x: box.rect.x / geometry.scaleX, y: box.rect.y / geometry.scaleY,
                                 width: box.rect.width / geometry.scaleX, height: box.rect.height / geometry.scaleY)
            return Observation(type: .humanBody, rect: UnitRect(rect, in: size).clippedToUnit(), confidence: box.score)
        }
        // Greedy suppression by overlap alone (no box dropped for lying inside another: a child
        // in front of an adult is two people).
        return found.filter { $0.rect.width > 0 && $0.rect.height > 0 }
            .suppressingOverlaps(above: params.suppressionOverlap, containment: .infinity)
    }

    /// A box the network found, in input pixels (top-left origin).
    struct Candidate {
        var rect: PixelRect
        var score: Double
    }

    /// The network's output (1 x 6 x anchors, planar: `tools/yolox-person-only.py`) as person
    /// boxes scoring `threshold` or more: per anchor on the grids of strides 8, 16 and 32 (rows
    /// top to bottom, each left to right), centre = (output + cell) x stride, size = exp(output)
    /// x stride, score = objectness x the person score.
    static func decode(_ values: UnsafeBufferPointer<Float>, shape: [Int], input: ImageSize, threshold: Double,
                       detector: String) throws(DetectorError) -> [Candidate] {
        let strides = [8, 16, 32]
        let anchors = strides.reduce(0) { $0 + (input.width / $1) * (input.height / $1) }
        guard shape == [1, Self.outputRows, anchors], values.count == Self.outputRows * anchors else {
            throw .failed(detector: detector, reason: "unexpected output shape \(shape) for input \(input.width)x\(input.height)")
        }
        func row(_ r: Int) -> UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: values[(r * anchors)..<((r + 1) * anchors)]) }
        let centreXs = row(0), centreYs = row(1), widths = row(2), heights = row(3), objectness = row(4), person = row(5)
        var found: [Candidate] = []
        var anchor = 0
        for stride in strides {
            let columns = input.width / stride, rows = input.height / stride
            for gridRow in 0..<rows {
                for column in 0..<columns {
                    defer { anchor += 1 }
                    let object = Double(objectness[anchor])
                    guard object >= threshold else { continue }
                    let score = object * Double(person[anchor])
                    guard score >= threshold else { continue }
                    let s = Double(stride)
                    let centreX = (Double(centreXs[anchor]) + Double(column)) * s
                    let centreY = (Double(centreYs[anchor]) + Double(gridRow)) * s
                    let w = exp(min(Double(widths[anchor]), 10)) * s, h = exp(min(Double(heights[anchor]), 10)) * s
                    guard centreX.isFinite, centreY.isFinite, w.isFinite, h.isFinite else { continue }
                    found.append(Candidate(rect: PixelRect(x: centreX - w / 2, y: centreY - h / 2, width: w, height: h), score: score))
                }
            }
        }
        return found
    }

    /// The network for input size `input`, compiled when the size is new.
    private func network(for input: ImageSize) throws(DetectorError) -> EngineNetwork {
        if let network, network.input == input { return network.network }
        let compiled = try InferenceEngine.shared().network(model: modelPath, inputShape: [1, 12, input.height / 2, input.width / 2],
                                                            threads: params.threads, precision: params.precision, hint: hint)
        network = (input, compiled)
        return compiled
    }
}
