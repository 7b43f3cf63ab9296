
/// The detectors a user can select by name.
public enum DetectorCatalog {
    /// Every name with a one-line description, for `--help` and error messages.
    public static let descriptions: KeyValuePairs<String, String> = [
        "default": "mtcnn-face + yolox-body: faces from 20 px up (no animal faces) and people of every size (YOLOX-nano on the inference engine: no windows, ladders, dogs or text)",
        "dnn-face": "faces, res10 SSD DNN (models/)",
        "dnn-face-verified": "faces, res10 SSD DNN, each face checked by MTCNN's O-Net (no animal faces)",
        "mtcnn-face": "faces, the whole MTCNN cascade from 20 px faces up (models/pnet, rnet, onet): small faces in large frames, no animal faces; 1.2 to 2 times res10's time",
        "blazeface-face": "faces, MediaPipe's BlazeFace full range (models/blazeface_full_range_planar) on the inference engine over the whole frame at 192x192: faces from about 1/25 of the longer side, about 2.5 ms a look; boxes animals' faces too",
        "blazeface-face-verified": "faces, blazeface-face, each face checked by MTCNN's O-Net (no animal faces)",
        "blazeface-short-face": "faces, MediaPipe's BlazeFace short range (models/blazeface_short_range_planar) at 128x128: near faces only (from about a tenth of the longer side), under 1 ms a look",
        "haar-face": "faces, Haar cascades, frontal and profile (opencv-data)",
        "lbp-face": "faces, LBP cascades, frontal and profile: fastest (opencv-data)",
        "fast": "dnn-face-verified + yolox-body: faces from about a tenth of the frame's height, and people of every size",
        "hog-body": "people, HOG + linear SVM (built into OpenCV)",
        "hog-body-fast": "people, HOG with the Daimler 48x96 window (built into OpenCV), coarser scale steps, people from 0.085 of the height (those under 0.12 in a pass of their own)",
        "cascade-body": "people, Haar full-body and upper-body cascades (opencv-data)",
        "confirmed-body": "people: hog-body-fast's boxes, each kept only when the SSDLite person network (models/ssdlite_mobilenet_v2_people) finds a person in it; a verdict holds 16 rounds where it was given, then is checked again unless the person walked since",
        "ssd-body": "people, the SSDLite person network over the whole frame at 300x300: large people only, 25 to 50 ms a frame",
        "yolox-body": "people, YOLOX-nano (models/yolox_nano_person.onnx) on the inference engine (OpenVINO) over the whole frame at long side 416: people from about 15 px tall to close-ups, 6 to 12 ms a look on one core",
        "yolox-body-int8": "people, yolox-body's network quantized to 8 bits (models/yolox_nano_person_int8): about 40% less time a look, a few more small walkers missed and false people",
    ]

    public static var names: [String] { descriptions.map(\.key) }

    /// The detector named `name`: one of ``names``, or several joined by `,` or `+`.
    package static func make(_ name: String, models: ModelStore) throws(DetectorError) -> any Detector {
        let parts = name.split(whereSeparator: { $0 == "," || $0 == "+" }).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !parts.isEmpty else { throw .unknownDetector(name: name, known: names) }
        if parts.count == 1 { return try makeOne(parts[0], models: models) }
        var detectors: [any Detector] = []
        for part in parts { detectors.append(try makeOne(part, models: models)) }
        return CombinedDetector(detectors)
    }

    private static func verifiedFaces(_ models: ModelStore) throws(DetectorError) -> VerifiedFaceDetector {
        try VerifiedFaceDetector(SSDFaceDetector(models: models), models: models)
    }

    /// hog-body-fast's boxes confirmed by the person network.
    private static func confirmedBodies(_ models: ModelStore) throws(DetectorError) -> ConfirmedBodyDetector {
        ConfirmedBodyDetector(try HOGPeopleDetector(params: .fast), network: try PersonNetwork(models: models))
    }

    private static func makeOne(_ name: String, models: ModelStore) throws(DetectorError) -> any Detector {
        switch name {
        case "default": return CombinedDetector([try MTCNNFaceDetector(models: models), try YOLOXPersonDetector(models: models)])
        case "dnn-face": return try SSDFaceDetector(models: models)
        case "dnn-face-verified": return try verifiedFaces(models)
        case "mtcnn-face": return try MTCNNFaceDetector(models: models)
        case "blazeface-face": return try BlazeFaceDetector(models: models)
        case "blazeface-face-verified": return try VerifiedFaceDetector(BlazeFaceDetector(models: models), models: models)
        case "blazeface-short-face": return try BlazeFaceDetector(models: models, params: .init(range: .short))
        case "haar-face": return try CascadeDetector.haarFaces(models: models)
        case "lbp-face": return try CascadeDetector.lbpFaces(models: models)
        case "fast": return CombinedDetector([try verifiedFaces(models), try YOLOXPersonDetector(models: models)])
        case "hog-body": return try HOGPeopleDetector()
        case "hog-body-fast": return try HOGPeopleDetector(params: .fast)
        case "cascade-body": return try CascadeDetector.haarBodies(models: models)
        case "confirmed-body": return try confirmedBodies(models)
        case "ssd-body": return try SSDPeopleDetector(models: models)
        case "yolox-body": return try YOLOXPersonDetector(models: models)
        case "yolox-body-int8":
            var params = YOLOXPersonDetector.Params()
            params.eightBit = true
            return try YOLOXPersonDetector(models: models, params: params)
        default: throw .unknownDetector(name: name, known: names)
        }
    }
}
