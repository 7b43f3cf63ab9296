import DockTrackCore
import DockTrackDetection
import Foundation

/// The loop a user would write instead of DockTrack, the bar `docktrack bench` measures against:
/// OpenCV-Python from Debian's python3-opencv, the res10 face DNN on whole 300x300 frames. Each
/// measurement runs a small Python program; `nil` when python3 with cv2 is not there.
package struct OpenCVPythonBaseline: Sendable {
    package var prototxt: String
    package var weights: String

    /// The baseline with res10's model files from `store`.
    package init(models store: ModelStore) {
        let res10 = SSDFaceDetector.modelFiles(in: store)
        prototxt = res10.prototxt
        weights = res10.weights
    }

    /// Frames per second of the loop over the first `frames` frames of the video at `input`.
    package func framesPerSecond(input: String, frames: Int) -> Double? {
        Self.runPython(Self.speedProgram, [input, prototxt, weights, String(min(frames, 1_000_000))])
            .flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Face recall of the loop on the labelled media of `folder` (``LabelledFaces``), scored as
    /// ``FaceRecall`` scores DockTrack's detectors.
    package func faceRecall(folder: String, minimumConfidence threshold: Double) throws -> FaceRecall? {
        let labels = try LabelledFaces(folder: folder)
        guard let output = Self.runPython(Self.facesProgram, [prototxt, weights, folder, String(threshold), String(labels.portraits.count)]
                                          + labels.portraits.map(\.file) + labels.clips) else { return nil }
        // One line per picture or frame, in the order FaceRecall.measure reads them.
        var lines = output.split(separator: "\n", omittingEmptySubsequences: true)[...]
        return try FaceRecall.measure(folder: folder) { file, image in
            guard let line = lines.popFirst(), line.hasPrefix(file + "\t") else { throw OutOfStep(file: file) }
            return line.dropFirst(file.count + 1).split(separator: ";").compactMap { box in
                let v = box.split(separator: ",").compactMap { Double($0) }
                return v.count == 4 ? UnitRect(PixelRect(x: v[0], y: v[1], width: v[2], height: v[3]), in: image.size) : nil
            }
        }
    }

    /// The Python program's face list does not follow the labelled files.
    package struct OutOfStep: Error, CustomStringConvertible {
        package var file: String
        package var description: String { "the baseline's face list is out of step at \(file)" }
    }

    /// argv: video, prototxt, weights, frame limit; prints frames per second.
    static let speedProgram = """
        import sys, time, cv2
        net = cv2.dnn.readNetFromCaffe(sys.argv[2], sys.argv[3])
        cap = cv2.VideoCapture(sys.argv[1])
        limit = int(sys.argv[4])
        n = 0; start = time.time()
        while n < limit:
            ok, frame = cap.read()
            if not ok: break
            net.setInput(cv2.dnn.blobFromImage(frame, 1.0, (300, 300), (104, 177, 123)))
            detections = net.forward()
            n += 1
        print(n / (time.time() - start))
        """

    /// argv: prototxt, weights, folder, threshold, number of pictures, the pictures, the clips;
    /// prints "file<TAB>x,y,w,h;..." per picture and per frame of each clip.
    static let facesProgram = """
        import sys, cv2
        net = cv2.dnn.readNetFromCaffe(sys.argv[1], sys.argv[2])
        folder, threshold, pictures = sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
        def faces(name, frame):
            h, w = frame.shape[:2]
            net.setInput(cv2.dnn.blobFromImage(frame, 1.0, (300, 300), (104, 177, 123)))
            d = net.forward()[0, 0]
            boxes = [(x1 * w, y1 * h, (x2 - x1) * w, (y2 - y1) * h) for _, _, c, x1, y1, x2, y2 in d if c >= threshold]
            print(name + "\\t" + ";".join("%.1f,%.1f,%.1f,%.1f" % b for b in boxes))
        files = sys.argv[6:]
        for name in files[:pictures]:
            faces(name, cv2.imread(folder + "/" + name))
        for name in files[pictures:]:
            cap = cv2.VideoCapture(folder + "/" + name)
            while True:
                ok, frame = cap.read()
                if not ok: break
                faces(name, frame)
        """

    /// The stronger bar: a Python loop over MediaPipe's BlazeFace short-range face detector
    /// (`mediapipe.solutions.face_detection`, model 0, confidence 0.5; PyPI mediapipe 0.10.21,
    /// whose wheel ships the model), run by `python` (a venv that has it: `make bench` makes
    /// `.venv-bench`). Frames per second over the first `frames` frames of `input`; `nil` when
    /// that python cannot run it.
    package static func mediaPipeFramesPerSecond(python: String, input: String, frames: Int) -> Double? {
        runPython(mediaPipeProgram, [input, String(min(frames, 1_000_000))], interpreter: python)
            .flatMap { $0.split(separator: "\n").last.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
    }

    /// argv: video, frame limit; prints frames per second (decoding, colour conversion, detection).
    static let mediaPipeProgram = """
        import sys, time, cv2
        import mediapipe as mp
        detector = mp.solutions.face_detection.FaceDetection(model_selection=0, min_detection_confidence=0.5)
        cap = cv2.VideoCapture(sys.argv[1])
        limit = int(sys.argv[2])
        n = 0; start = time.time()
        while n < limit:
            ok, frame = cap.read()
            if not ok: break
            result = detector.process(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
            n += 1
        print(n / (time.time() - start))
        """

    /// The same-job peer: a Python loop of YOLOX-nano (ONNX Runtime, one thread, letterboxed to
    /// 416x416, person score 0.6, OpenCV's NMS) with supervision's ByteTrack on every frame (PyPI
    /// onnxruntime and supervision 0.26.1; `make bench` puts both in `.venv-bench`), on the model
    /// DockTrack ships (its input folded 2x2 by numpy, as the layer DockTrack's copy leaves out did). Frames per second over the first `frames` frames of `input`; `nil` when
    /// that python cannot run it.
    package static func yoloxByteTrackFramesPerSecond(python: String, model: String, input: String, frames: Int) -> Double? {
        runPython(yoloxByteTrackProgram, [input, String(min(frames, 1_000_000)), model], interpreter: python)
            .flatMap { $0.split(separator: "\n").last.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
    }

    /// argv: video, frame limit, model; prints frames per second (decoding, detection, tracking).
    static let yoloxByteTrackProgram = """
        import sys, time, cv2, numpy as np, onnxruntime as ort, supervision as sv
        video, limit, model = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        options = ort.SessionOptions(); options.intra_op_num_threads = 1; options.inter_op_num_threads = 1
        session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        grids, strides = [], []
        for s in (8, 16, 32):
            n = 416 // s
            xv, yv = np.meshgrid(np.arange(n), np.arange(n))
            grids.append(np.stack((xv, yv), 2).reshape(-1, 2)); strides.append(np.full((n * n, 1), s))
        grid = np.concatenate(grids).astype(np.float32); stride = np.concatenate(strides).astype(np.float32)
        tracker = sv.ByteTrack()
        cap = cv2.VideoCapture(video)
        n = 0; start = time.time()
        while n < limit:
            ok, frame = cap.read()
            if not ok: break
            h, w = frame.shape[:2]; r = min(416 / h, 416 / w)
            padded = np.full((416, 416, 3), 114, dtype=np.uint8)
            padded[:int(round(h * r)), :int(round(w * r))] = cv2.resize(frame, (int(round(w * r)), int(round(h * r))))
            x = padded.transpose(2, 0, 1)[None].astype(np.float32)
            # The model's first layer (YOLOX's Focus), which DockTrack's copy leaves to its caller.
            x = np.concatenate((x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]), 1)
            # DockTrack's copy reports only COCO's person, planar: 6 rows (box 4, objectness, person) x anchors.
            out = session.run(None, {name: np.ascontiguousarray(x)})[0][0].T
            scores = out[:, 4] * out[:, 5]
            keep = scores >= 0.6
            xyxy = np.zeros((0, 4), np.float32); conf = np.zeros((0,), np.float32)
            if np.any(keep):
                o, sc = out[keep], scores[keep]
                cxcy = (o[:, 0:2] + grid[keep]) * stride[keep]; wh = np.exp(o[:, 2:4]) * stride[keep]
                boxes = np.concatenate((cxcy - wh / 2, cxcy + wh / 2), 1) / r
                idx = np.array(cv2.dnn.NMSBoxes(np.concatenate((boxes[:, :2], boxes[:, 2:] - boxes[:, :2]), 1).tolist(),
                                                sc.tolist(), 0.6, 0.45), dtype=np.int64).reshape(-1)
                xyxy = boxes[idx].astype(np.float32); conf = sc[idx].astype(np.float32)
            tracks = tracker.update_with_detections(sv.Detections(xyxy=xyxy, confidence=conf, class_id=np.zeros(len(conf), dtype=int)))
            n += 1
        print(n / (time.time() - start))
        """

    /// Runs `script` with `interpreter`, else Debian's python3 (which has cv2); its standard
    /// output, or `nil` when it cannot run or fails.
    static func runPython(_ script: String, _ arguments: [String], interpreter: String? = nil) -> String? {
        let process = Process()
        let debian = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
        if let interpreter {
            process.executableURL = URL(fileURLWithPath: interpreter)
            process.arguments = ["-c", script] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: debian ? "/usr/bin/python3" : "/usr/bin/env")
            process.arguments = (debian ? [] : ["python3"]) + ["-c", script] + arguments
        }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
