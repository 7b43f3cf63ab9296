import DockTrackCore
import DockTrackMedia
import CDockCV
import Foundation

/// Faces with the whole MTCNN cascade (Zhang et al. 2016; `models/pnet.onnx`, `rnet.onnx`,
/// `onet.onnx`): a 12-pixel proposal network over an image pyramid from faces of
/// ``Params/minimumFace`` pixels up, then a refine and an output network on the proposals. Finds
/// small faces in large frames (the pyramid starts at the frame's own pixels, where res10 first
/// shrinks the frame to 300 px), at a cost that grows with the frame's area.
package final class MTCNNFaceDetector: RegionLimitedDetector, SmallestFaceDetector, QuickWholeFaceLook {
    package struct Params: Sendable, Equatable {
        /// The smallest face looked for, in pixels (12 at least).
        package var minimumFace = 20.0
        /// Face probability each network's boxes must reach (proposal, refine, output).
        package var thresholds: [Float] = [0.6, 0.7, 0.5]
        /// The output network's face probability reported as confidence 0.5, the operating
        /// point. On the public labelled set every real face scores 0.995 or more on the
        /// cascade's own boxes; over 24 panned and zoomed views of samples/faces/dogs.jpg the
        /// dogs score 0.84 at most.
        package var probabilityAtHalfConfidence = 0.95
        /// A wider frame is shrunk to this width first (the smallest face found grows with it):
        /// the cost grows with the frame's area, 1.1 s for 1920x1418 on 2 cores.
        package var maximumWorkingWidth = 1920
        /// R-Net, O-Net, and P-Net on the whole picture, run by the inference engine (OpenCV's
        /// DNN runs them all when false, the reference the engine's faces are compared with, and
        /// when the engine is missing).
        package var onEngine = true
        /// A quick whole-picture look (``QuickWholeFaceLook``): BlazeFace full range on the
        /// engine, each face checked by O-Net (`blazeface-face-verified`: 43 of 43 public faces
        /// at 2.7 ms a picture against the cascade's 13.1; faces from about 1/25 of the longer
        /// side). Off, or without the engine or its model: none.
        package var quickLook = true
        package init() {}
    }

    /// The confidence of a face the output network gives `probability`: its log-odds less those
    /// of ``Params/probabilityAtHalfConfidence``, through the logistic curve.
    package func confidence(probability: Double) -> Double {
        func logit(_ p: Double) -> Double {
            let q = min(max(p, 1e-9), 1 - 1e-9)
            return log(q / (1 - q))
        }
        return 1 / (1 + exp(-(logit(probability) - logit(params.probabilityAtHalfConfidence))))
    }

    package let name = "mtcnn-face"
    /// Each face passed R-Net and then O-Net at a face probability of 0.95.
    package var checksWhatItFinds: Bool { true }
    package let params: Params

    /// ``Params/minimumFace`` of the frame once shrunk to the working width.
    package func smallestFace(in size: ImageSize) -> Double {
        let work = size.fitting(maxWidth: params.maximumWorkingWidth)
        return work.height > 0 ? params.minimumFace / Double(work.height) : 1
    }
    private let net: OpaquePointer
    /// P-Net, R-Net and O-Net on the inference engine, their input sizes left open (each picture
    /// of the pyramid, each batch of crops): the shim builds their inputs and reads their
    /// outputs. A look at a whole 1280x720 frame on one core: 130 ms with OpenCV 4.6's DNN.
    private let networks: [EngineNetwork]
    /// The quick whole-picture look, when there is one.
    private let quick: VerifiedFaceDetector?

    package init(models: ModelStore, params: Params = Params()) throws(DetectorError) {
        let files = ["pnet.onnx", "rnet.onnx", "onet.onnx"].map { models.model($0) }
        for file in files where !ModelStore.fileExists(file) { throw .modelMissing(path: file, hint: models.modelsHint) }
        net = try loadModel(files[0], hint: models.modelsHint) { dcv_mtcnn_open(files[0], files[1], files[2], $0) }
        var networks: [EngineNetwork] = []
        do {
            for file in files {
                networks.append(try InferenceEngine.shared().network(model: file, inputShape: [], threads: 1, precision: .f32,
                                                                     hint: models.modelsHint))
            }
        } catch .engineMissing {
            // Without the engine (not installed, DOCKTRACK_OPENVINO elsewhere), OpenCV's DNN runs
            // the cascade: the faces are the same, found more slowly.
            networks = []
        }
        self.networks = networks
        self.params = params
        // The quick look is only a cheaper way to the same faces: when its model is missing or
        // the engine cannot read it, the cascade makes every look (slower, the same faces).
        quick = params.quickLook && !networks.isEmpty
            ? try? VerifiedFaceDetector(BlazeFaceDetector(models: models), models: models) : nil
    }

    package func quickWholeLook(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation]? {
        // A picture too small for BlazeFace (under 16 px a side) the cascade may still look at.
        let least = BlazeFaceDetector.smallestPicture
        guard image.width >= least.width, image.height >= least.height else { return nil }
        return try quick?.detect(in: image, minimumConfidence: minimumConfidence)
    }

    /// BlazeFace sees the whole picture at 192x192: a face a sixteenth of the longer side is
    /// 12 px there (its grid's cells are 4 px; the public set's faces, 37 to 109 px in pictures
    /// of 500 px, were all found).
    package func smallestQuickFace(in size: ImageSize) -> Double {
        size.height > 0 ? Double(max(size.width, size.height)) / 16 / Double(size.height) : 1
    }

    deinit { dcv_mtcnn_destroy(net) }

    /// Faces whose ``confidence(probability:)`` is at least `minimumConfidence` (and whose
    /// output-network probability reaches its threshold), from `smallestHeight` of the image's
    /// height up (never below ``Params/minimumFace`` pixels: the pyramid starts that much
    /// smaller; above 20 px, from up to 1.41 times that: the pyramid's scales come from a fixed
    /// ladder); near `regions` when given: the cascade runs on the part of the picture around
    /// each (grown by half its size each way, at least a smallest face), so a face that moved
    /// into a region, or was found there before, is found whole.
    package func detect(in image: Image, minimumConfidence: Double, smallestHeight: Double, regions: [UnitRect]?) throws(DetectorError) -> [Observation] {
        let size = image.size
        let work = size.fitting(maxWidth: params.maximumWorkingWidth)
        guard min(work.width, work.height) >= 12 else {
            // 12 px each way once shrunk: a frame shrunk to the working width needs more rows.
            let rows = Int((12 * Double(size.width) / Double(max(1, work.width))).rounded(.up))
            throw .frameTooSmall(detector: name, size: size, minimum: ImageSize(width: 12, height: max(12, rows)))
        }
        var thresholds = params.thresholds
        let asked = smallestHeight.isFinite ? min(max(0, smallestHeight), 1) * Double(work.height) : 0
        let minimumFace = Float(max(params.minimumFace, asked))
        let side = Int(Double(minimumFace).rounded(.up))
        let areas = regions.flatMap {
            SearchArea.around($0, in: work, minimum: ImageSize(width: side, height: side), maximumShare: 0.6) { r in
                (max(Double(side), r.width / 2), max(Double(side), r.height / 2))
            }
        }
        if areas?.isEmpty == true { return [] }
        let picture = try preparing(name) { () throws(OpenCVError) in try image.resized(to: work) }
        var found: [Observation] = []
        for area in areas ?? [SearchArea(x: 0, y: 0, width: work.width, height: work.height)] {
            let part = areas == nil ? picture : try preparing(name) { () throws(OpenCVError) in
                try picture.cropped(to: area.pixelRect, size: ImageSize(width: area.width, height: area.height))
            }
            // The proposal network on the engine only for the whole picture: its sizes repeat from
            // look to look (the pyramid's scales come from a fixed ladder), and the engine prepares
            // each new input size once, about 2 ms for each; the areas around people change size
            // at every look, where OpenCV's DNN costs less.
            let whole = areas == nil
            let boxes = try withExtendedLifetime(networks) { () throws(DetectorError) in
                let onEngine = params.onEngine && networks.count == 3
                var runners = onEngine ? networks.map { dcv_network_runner(context: Unmanaged.passUnretained($0).toOpaque(), run: runCascadeNetwork) } : []
                if onEngine && !whole { runners[0].run = nil }
                return try detectBoxes(name) { out, capacity, status in
                    dcv_mtcnn_detect_with(net, onEngine ? runners : nil, part.handle, minimumFace, &thresholds, out, capacity, status)
                }
            }
            found += boxes.map { box in
                let rect = PixelRect(x: Double(box.x) + Double(area.x), y: Double(box.y) + Double(area.y),
                                     width: Double(box.width), height: Double(box.height))
                return Observation(type: .humanFace, rect: UnitRect(rect, in: work), confidence: confidence(probability: Double(box.score)))
            }
        }
        return found.filter { $0.confidence >= minimumConfidence && $0.rect.width > 0 && $0.rect.height > 0 }
    }
}

/// Runs one of the cascade's networks for the shim (``dcv_network_runner``): `context` is its
/// ``EngineNetwork``. The outputs it asks for are the box regression (4 values a box) and the
/// face probability (2), told apart by size (O-Net also gives 10 landmark values).
private func runCascadeNetwork(context: UnsafeMutableRawPointer?, input: UnsafeMutablePointer<Float>?, shape: UnsafePointer<Int64>?,
                               rank: Int32, outputCount: Int32, outputs: UnsafeMutablePointer<UnsafePointer<Float>?>?,
                               outputShapes: UnsafeMutablePointer<Int64>?, status: UnsafeMutablePointer<dcv_status>?) -> Int32 {
    guard let context, let input, let shape, let outputs, let outputShapes, outputCount == 2 else { return -1 }
    let network = Unmanaged<EngineNetwork>.fromOpaque(context).takeUnretainedValue()
    let name = "mtcnn-face"
    do {
        try network.run(on: input, shape: (0..<Int(rank)).map { Int(shape[$0]) }, detector: name)
        var found = 0
        for index in 0..<3 {
            guard let output = try? network.output(index, detector: name), let last = output.shape.last else { break }
            let slot = last == 4 ? 0 : last == 2 ? 1 : -1
            guard slot >= 0 else { continue }
            outputs[slot] = output.values.baseAddress
            let dims = output.shape.suffix(4)
            for d in 0..<4 { outputShapes[slot * 4 + d] = 1 }
            for (d, size) in dims.enumerated() { outputShapes[slot * 4 + 4 - dims.count + d] = Int64(size) }
            found += 1
        }
        guard found == 2 else { throw DetectorError.failed(detector: name, reason: "a cascade network's outputs are not a box and a probability") }
        return 0
    } catch {
        // The shim words it as this detector's failure: only the reason goes back.
        let reason: String
        if case .failed(_, let why) = error as? DetectorError { reason = why } else { reason = String(describing: error) }
        status?.pointee.write(code: DCV_ERR_INTERNAL, message: reason)
        return -1
    }
}

extension dcv_status {
    /// Fills the status as the shim does: a code and one line of words, cut to fit.
    mutating func write(code: dcv_code, message: String) {
        self.code = Int32(code.rawValue)
        withUnsafeMutableBytes(of: &self.message) { buffer in
            let bytes = Array(message.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
    }
}
