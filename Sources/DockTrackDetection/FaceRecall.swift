import DockTrackCore
import DockTrackMedia
import Foundation


/// The faces a person marked in a folder of media (`samples/labelled-faces.tsv`): what face
/// recall is measured on. One line per file, tab-separated: a picture with the pixel (from the
/// top-left) at the centre of its one face, or a clip alone, which has a face in every frame.
package struct LabelledFaces: Sendable {
    /// The name of the labels file in a media folder.
    package static let fileName = "labelled-faces.tsv"

    /// Pictures with one face each, and where its centre is.
    package var portraits: [(file: String, face: PixelPoint)] = []
    /// Clips with one face in every frame.
    package var clips: [String] = []

    /// Reads the labels of `folder`; `#` starts a comment line.
    package init(folder: String) throws {
        let path = (folder as NSString).appendingPathComponent(Self.fileName)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw FrameSourceError.fileNotFound(path: path) }
        for (number, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") && !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let fields = line.split(separator: "\t").map { $0.trimmingCharacters(in: .whitespaces) }
            switch fields.count {
            case 1:
                clips.append(fields[0])
            case 3:
                guard let x = Double(fields[1]), let y = Double(fields[2]) else { fallthrough }
                portraits.append((fields[0], PixelPoint(x: x, y: y)))
            default:
                throw FrameSourceError.unreadable(path: path, reason: "line \(number + 1): neither 'file' nor 'file<TAB>x<TAB>y'")
            }
        }
    }
}

/// How many of the labelled faces a detector finds: a portrait counts when a face box holds
/// its face's centre, a frame of a labelled clip when any face is found.
package struct FaceRecall: Sendable, Equatable {
    package var portraitsFound = 0
    package var portraits = 0
    package var framesFound = 0
    package var frames = 0

    package init() {}

    package var found: Int { portraitsFound + framesFound }
    package var total: Int { portraits + frames }
    package var fraction: Double { total == 0 ? 0 : Double(found) / Double(total) }

    /// Scores faces found by any detector: `faces(file, image)` gives the face boxes of one
    /// picture or frame, read from `folder`.
    package static func measure(folder: String, faces: (String, Image) throws -> [UnitRect]) throws -> FaceRecall {
        var recall = FaceRecall()
        let labels = try LabelledFaces(folder: folder)
        for (file, face) in labels.portraits {
            let image = try Image(contentsOf: (folder as NSString).appendingPathComponent(file))
            recall.portraits += 1
            if try faces(file, image).contains(where: { face.isInside($0, of: image.size) }) { recall.portraitsFound += 1 }
        }
        for file in labels.clips {
            let clip = try VideoFileSource(path: (folder as NSString).appendingPathComponent(file))
            while let frame = try clip.nextFrame() {
                recall.frames += 1
                if try !faces(file, frame.image).isEmpty { recall.framesFound += 1 }
            }
        }
        return recall
    }

    /// The faces `detector` finds at `minimumConfidence`, scored.
    package static func measure(folder: String, detector: any Detector, minimumConfidence: Double = 0.5) throws -> FaceRecall {
        try measure(folder: folder) { _, image in
            try detector.detect(in: image, minimumConfidence: minimumConfidence).filter { $0.type == .humanFace }.map(\.rect)
        }
    }
}
