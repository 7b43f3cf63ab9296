import DockTrackCore
import DockTrackMedia
import Foundation


/// The faces a person marked in the media of `samples/`: what face recall is measured on.
public enum LabelledFaces {
    /// Portraits with one face each, and where its centre is (read off the pictures).
    public static let portraits: [(file: String, face: PixelPoint)] = [
        ("messi5.jpg", PixelPoint(x: 242, y: 112)),
        ("grace_hopper_512x512.jpg", PixelPoint(x: 264, y: 205)),
        ("astronaut.png", PixelPoint(x: 225, y: 116)),
    ]
    /// A clip with one face in every frame (a man talking on the phone, facing the camera).
    public static let faceInEveryFrame = "carphone_pristine.mp4"
}

/// How many of the labelled faces a detector finds: a portrait counts when a face box holds
/// its face's centre, a frame of ``LabelledFaces/faceInEveryFrame`` when any face is found.
public struct FaceRecall: Sendable, Equatable {
    public var portraitsFound = 0
    public var portraits = 0
    public var framesFound = 0
    public var frames = 0

    public init() {}

    public var found: Int { portraitsFound + framesFound }
    public var total: Int { portraits + frames }
    public var fraction: Double { total == 0 ? 0 : Double(found) / Double(total) }

    /// Scores faces found by any detector: `faces(file, image)` gives the face boxes of one
    /// picture or frame, read from `folder`.
    public static func measure(folder: String, faces: (String, Image) throws -> [UnitRect]) throws -> FaceRecall {
        var recall = FaceRecall()
        for (file, face) in LabelledFaces.portraits {
            let image = try Image(contentsOf: (folder as NSString).appendingPathComponent(file))
            recall.portraits += 1
            if try faces(file, image).contains(where: { face.isInside($0, of: image.size) }) { recall.portraitsFound += 1 }
        }
        let clip = try VideoFileSource(path: (folder as NSString).appendingPathComponent(LabelledFaces.faceInEveryFrame))
        while let frame = try clip.nextFrame() {
            recall.frames += 1
            if try !faces(LabelledFaces.faceInEveryFrame, frame.image).isEmpty { recall.framesFound += 1 }
        }
        return recall
    }

    /// The faces `detector` finds at `minimumConfidence`, scored.
    public static func measure(folder: String, detector: any Detector, minimumConfidence: Double = 0.5) throws -> FaceRecall {
        try measure(folder: folder) { _, image in
            try detector.detect(in: image, minimumConfidence: minimumConfidence).filter { $0.type == .humanFace }.map(\.rect)
        }
    }
}
