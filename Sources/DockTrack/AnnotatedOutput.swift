import CDockCV
import Foundation

/// A colour as OpenCV takes it.
public struct BGR: Sendable, Equatable {
    public var blue: Int, green: Int, red: Int
    public init(blue: Int, green: Int, red: Int) {
        self.blue = blue
        self.green = green
        self.red = red
    }

    public static let faceGreen = BGR(blue: 60, green: 220, red: 60)
    public static let bodyBlue = BGR(blue: 255, green: 140, red: 40)
    public static let objectYellow = BGR(blue: 0, green: 220, red: 255)
    public static let white = BGR(blue: 255, green: 255, red: 255)
    public static let black = BGR(blue: 0, green: 0, red: 0)
}

/// Draws on a copy of a frame: boxes with labels, in the frame's own pixels.
public struct Canvas {
    public let image: Image

    /// A canvas holding a copy of `image`, which stays untouched.
    public init(copying image: Image) throws(OpenCVError) {
        self.image = try image.copy()
    }

    public var size: ImageSize { image.size }

    /// An outlined box around `rect` (unit coordinates, lower-left origin) with a label above it.
    public func box(_ rect: UnitRect, color: BGR, label: String? = nil, thickness: Int = 2) {
        let p = rect.pixelRect(in: size)
        dcv_image_draw_rect(image.handle, Int32(p.x), Int32(p.y), Int32(p.width), Int32(p.height),
                            Int32(color.blue), Int32(color.green), Int32(color.red), Int32(thickness))
        if let label {
            text(label, x: Int(p.x), y: max(12, Int(p.y) - 4), color: color)
        }
    }

    /// Text with a dark backing so it reads on any picture; (x, y) is the baseline's left end.
    public func text(_ string: String, x: Int, y: Int, color: BGR = .white, scale: Double = 0.45) {
        let width = Int(Double(string.count) * 20 * scale) + 4
        let height = Int(28 * scale)
        dcv_image_fill_rect(image.handle, Int32(x), Int32(y - height + 3), Int32(width), Int32(height + 2), 0, 0, 0)
        dcv_image_draw_text(image.handle, string, Int32(x + 2), Int32(y), scale,
                            Int32(color.blue), Int32(color.green), Int32(color.red), 1)
    }

    /// Draws every observation: faces green, bodies blue, objects yellow.
    public func observations(_ observations: [Observation]) {
        for o in observations {
            let color: BGR = switch o.type {
            case .humanFace: .faceGreen
            case .humanBody: .bodyBlue
            case .object: .objectYellow
            }
            box(o.rect, color: color, label: "\(o.type == .humanFace ? "face" : o.type == .humanBody ? "body" : "object") \(Int((o.confidence * 100).rounded()))%")
        }
    }
}

extension Canvas {
    /// Draws every subject: its box, the start of its identifier, its rank, and bars for the
    /// speaking (S) and looking-at-camera (L) confidences.
    public func subjects(_ subjects: [TrackedSubject]) {
        for s in subjects {
            let color: BGR = s.kind == .object ? .objectYellow : (s.saliencyRank == 1 ? .faceGreen : .bodyBlue)
            let rank = s.saliencyRank.map { "#\($0) " } ?? ""
            box(s.rect, color: color, label: "\(rank)\(s.id.uuidString.prefix(4))", thickness: s.saliencyRank == 1 ? 3 : 2)
            if let face = s.faceRect { box(face, color: color, thickness: 1) }
            let p = s.rect.pixelRect(in: size)
            var y = Int(p.y + p.height) + 4
            for (letter, value) in [("S", s.speakingConfidence), ("L", s.lookingAtCameraConfidence)] {
                guard let value else { continue }
                bar(letter, value: value, x: Int(p.x), y: y, color: color)
                y += 9
            }
        }
    }

    /// A small labelled bar 40 px long filled to `value` (0...1).
    public func bar(_ letter: String, value: Double, x: Int, y: Int, color: BGR) {
        dcv_image_fill_rect(image.handle, Int32(x), Int32(y), 50, 8, 0, 0, 0)
        dcv_image_draw_text(image.handle, letter, Int32(x + 1), Int32(y + 7), 0.3, 255, 255, 255, 1)
        let filled = Int32((max(0, min(1, value)) * 40).rounded())
        dcv_image_fill_rect(image.handle, Int32(x + 9), Int32(y + 1), filled, 6, Int32(color.blue), Int32(color.green), Int32(color.red))
    }
}

/// Writes frames to a video file (MPEG-4 in .mp4/.mov/.m4v, Motion JPEG in .avi), or, for an
/// image path, the single frame as an image.
public final class AnnotatedOutput {
    public let path: String
    private let writer: OpaquePointer?
    private var stillWritten = false

    /// An output at `path` for frames of `size` at `framesPerSecond`. The folder must exist.
    public init(path: String, size: ImageSize, framesPerSecond: Double) throws(OpenCVError) {
        self.path = path
        if MediaFile.isImage(path) {
            writer = nil
            return
        }
        let fourcc = (path as NSString).pathExtension.lowercased() == "avi" ? "MJPG" : "mp4v"
        writer = try checkedHandle {
            dcv_writer_open(path, fourcc, framesPerSecond > 0 ? framesPerSecond : 30, Int32(size.width), Int32(size.height), $0)
        }
    }

    deinit { if let writer { dcv_writer_destroy(writer) } }

    public func write(_ image: Image) throws(OpenCVError) {
        if let writer {
            try checkedCount { dcv_writer_write(writer, image.handle, $0) }
        } else if !stillWritten {
            try image.write(to: path)
            stillWritten = true
        }
    }
}
