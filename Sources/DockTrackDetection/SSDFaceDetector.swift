import DockTrackCore
import DockTrackMedia
import CDockCV

/// Faces with OpenCV's res10 SSD (a ResNet-10 single-shot detector trained for faces, Caffe
/// weights in `models/`). The most accurate face detector DockTrack ships.
package final class SSDFaceDetector: Detector {
    package struct Params: Sendable, Equatable {
        /// Network input height in pixels (the model was trained at 300x300).
        package var inputHeight = 300
        /// Give the network an input with the image's aspect ratio instead of squashing the
        /// image to a square; finds more faces in wide frames at the same height.
        package var keepAspectRatio = true
        /// The widest input (px, a multiple of 32): a wider picture is squeezed to it. Four
        /// times the height covers every camera's shape up to 32:9 at its own aspect; a
        /// 4000x20 strip at its aspect made a 60000x300 input, 6.5 s and gigabytes a look.
        package var widestInput = 1216
        /// Boxes less tall than this fraction of the image are dropped (noise at 300 px input).
        package var minimumRelativeHeight = 0.02
        /// Width over height (in pixels) a face box may have. Real faces are 0.65 to 1.0; the
        /// SSD's false hits on pens and table edges are thin slivers clipped at the border.
        package var aspectRange: ClosedRange<Double> = 0.6...1.35
        /// The part of a box that must lie inside the image. The SSD's false hits on objects
        /// at the border reach far outside it; real faces cut by the border are rarely the
        /// subject a dock should frame.
        package var minimumFractionInside = 0.7
        package init() {}
    }

    package let name = "dnn-face"
    package let params: Params
    private let net: OpaquePointer

    /// The network's two files in `models`: its layers (prototxt) and its weights (caffemodel).
    package static func modelFiles(in models: ModelStore) -> (prototxt: String, weights: String) {
        (models.model("res10_300x300_ssd_deploy.prototxt"), models.model("res10_300x300_ssd_iter_140000.caffemodel"))
    }

    /// Loads `res10_300x300_ssd_deploy.prototxt` and `res10_300x300_ssd_iter_140000.caffemodel`.
    package init(models: ModelStore, params: Params = Params()) throws(DetectorError) {
        let (prototxt, weights) = Self.modelFiles(in: models)
        guard ModelStore.fileExists(prototxt) else { throw .modelMissing(path: prototxt, hint: models.modelsHint) }
        net = try loadModel(weights, hint: models.modelsHint) { dcv_ssd_open_caffe(prototxt, weights, $0) }
        self.params = params
    }

    deinit { dcv_ssd_destroy(net) }

    package func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] {
        let size = image.size
        let height = params.inputHeight
        var width = height
        if params.keepAspectRatio, size.height > 0 {
            // Multiples of 32 keep the SSD's feature maps aligned with its prior boxes.
            width = max(32, Int((Double(height) * Double(size.width) / Double(size.height) / 32).rounded()) * 32)
            width = min(width, max(32, params.widestInput))
        }
        let boxes = try detectBoxes(name) { out, capacity, status in
            dcv_ssd_detect(net, image.handle, Int32(width), Int32(height), 104, 177, 123,
                           Float(minimumConfidence), out, capacity, status)
        }
        return boxes.filter { isPlausibleFace($0, in: size) }
            .map { Observation(type: .humanFace, rect: $0.unitRect(in: size), confidence: Double($0.score)) }
            .filter { $0.rect.height >= params.minimumRelativeHeight }
            .suppressingOverlaps()
    }

    /// Whether a raw (unclipped) SSD box has a face's shape and lies mostly inside the image.
    func isPlausibleFace(_ box: dcv_box, in size: ImageSize) -> Bool {
        let aspect = Double(box.width) / Double(max(1, box.height))
        let insideWidth = min(Double(box.x + box.width), Double(size.width)) - max(Double(box.x), 0)
        let insideHeight = min(Double(box.y + box.height), Double(size.height)) - max(Double(box.y), 0)
        let inside = max(0, insideWidth) * max(0, insideHeight) / max(1, Double(box.width * box.height))
        return params.aspectRange.contains(aspect) && inside >= params.minimumFractionInside
    }
}
