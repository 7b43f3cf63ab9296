import DockTrackCore
import DockTrackSystem
import CDockCV
import Foundation

/// A colour as OpenCV takes it.
package struct BGR: Sendable, Equatable {
    package var blue: Int, green: Int, red: Int
    package init(blue: Int, green: Int, red: Int) {
        self.blue = blue
        self.green = green
        self.red = red
    }

    package static let faceGreen = BGR(blue: 60, green: 220, red: 60)
    package static let bodyBlue = BGR(blue: 255, green: 140, red: 40)
    package static let objectYellow = BGR(blue: 0, green: 220, red: 255)
    package static let white = BGR(blue: 255, green: 255, red: 255)
    package static let gestureMagenta = BGR(blue: 255, green: 60, red: 230)
    package static let black = BGR(blue: 0, green: 0, red: 0)
}

/// Draws on a copy of a frame: boxes with labels, in the frame's own pixels.
package struct Canvas {
    package let image: Image

    /// A canvas holding a copy of `image`, which stays untouched.
    package init(copying image: Image) throws(OpenCVError) {
        self.image = try image.copy()
    }

    package var size: ImageSize { image.size }

    /// An outlined box around `rect` (unit coordinates, lower-left origin) with a label above it.
    package func box(_ rect: UnitRect, color: BGR, label: String? = nil, thickness: Int = 2) {
        let p = rect.pixelRect(in: size)
        dcv_image_draw_rect(image.handle, Int32(p.x), Int32(p.y), Int32(p.width), Int32(p.height),
                            Int32(color.blue), Int32(color.green), Int32(color.red), Int32(thickness))
        if let label {
            text(label, x: Int(p.x), y: max(12, Int(p.y) - 4), color: color)
        }
    }

    /// `picture` shrunk into `rect` (unit coordinates, lower-left origin) with a white frame:
    /// a picture in the picture.
    package func inset(_ picture: Image, in rect: UnitRect) throws(OpenCVError) {
        let p = rect.pixelRect(in: size)
        try checkedCount { dcv_image_paste(image.handle, picture.handle, Int32(p.x), Int32(p.y), Int32(max(1, p.width)), Int32(max(1, p.height)), $0) }
        box(rect, color: .white, thickness: 1)
    }

    /// Text with a dark backing so it reads on any picture; (x, y) is the baseline's left end.
    package func text(_ string: String, x: Int, y: Int, color: BGR = .white, scale: Double = 0.45) {
        let width = Int(Double(string.count) * 20 * scale) + 4
        let height = Int(28 * scale)
        dcv_image_fill_rect(image.handle, Int32(x), Int32(y - height + 3), Int32(width), Int32(height + 2), 0, 0, 0)
        dcv_image_draw_text(image.handle, string, Int32(x + 2), Int32(y), scale,
                            Int32(color.blue), Int32(color.green), Int32(color.red), 1)
    }

    /// Draws every observation: faces green, bodies blue, objects yellow.
    package func observations(_ observations: [Observation]) {
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
    /// Draws the overview camera's people: the one followed in yellow, thicker, the others in
    /// blue (the control page's overview picture, simulate's inset).
    package func overviewPeople(_ subjects: [TrackedSubject], chosen: UUID?) {
        for subject in subjects {
            let isChosen = subject.id == chosen
            box(subject.rect, color: isChosen ? .objectYellow : .bodyBlue, thickness: isChosen ? 4 : 2)
        }
    }

    /// Draws every subject: its box, the start of its identifier, its rank, and bars for the
    /// speaking (S) and looking-at-camera (L) confidences.
    package func subjects(_ subjects: [TrackedSubject]) {
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

    /// A recognized gesture: the hand's square (magenta) and what it said, over the hand.
    package func gesture(hand: UnitRect, label: String) {
        box(hand, color: .gestureMagenta, label: label, thickness: 3)
    }

    /// A line between two points given in unit coordinates (lower-left origin).
    package func line(from a: (x: Double, y: Double), to b: (x: Double, y: Double), color: BGR, thickness: Int = 1) {
        let from = UnitPoint(x: a.x, y: a.y).pixel(in: size), to = UnitPoint(x: b.x, y: b.y).pixel(in: size)
        dcv_image_draw_line(image.handle, Int32(from.x), Int32(from.y), Int32(to.x), Int32(to.y),
                            Int32(color.blue), Int32(color.green), Int32(color.red), Int32(thickness))
    }

    /// The framing overlay: the region of interest (dashed white when not the whole picture),
    /// the target zone around the framing target (yellow) with a cross at the target, and the
    /// dock's pose.
    package func framing(regionOfInterest roi: UnitRect, target: (x: Double, y: Double)?, pose: DockOrientation?, state: String?) {
        if roi != UnitRect(x: 0, y: 0, width: 1, height: 1) { box(roi, color: .white, thickness: 1) }
        if let target {
            box(UnitRect(x: target.x - 1.0 / 6, y: target.y - 0.2, width: 1.0 / 3, height: 0.4), color: .objectYellow, thickness: 1)
            line(from: (target.x - 0.02, target.y), to: (target.x + 0.02, target.y), color: .objectYellow)
            line(from: (target.x, target.y - 0.027), to: (target.x, target.y + 0.027), color: .objectYellow)
        }
        if let pose {
            text(String(format: "pan %+.1f deg  tilt %+.1f deg%@", pose.y * 180 / .pi, pose.x * 180 / .pi, state.map { "  " + $0 } ?? ""),
                 x: 4, y: size.height - 6)
        }
    }

    /// A small labelled bar 40 px long filled to `value` (0...1).
    package func bar(_ letter: String, value: Double, x: Int, y: Int, color: BGR) {
        dcv_image_fill_rect(image.handle, Int32(x), Int32(y), 50, 8, 0, 0, 0)
        dcv_image_draw_text(image.handle, letter, Int32(x + 1), Int32(y + 7), 0.3, 255, 255, 255, 1)
        let filled = Int32((max(0, min(1, value)) * 40).rounded())
        dcv_image_fill_rect(image.handle, Int32(x + 9), Int32(y + 1), filled, 6, Int32(color.blue), Int32(color.green), Int32(color.red))
    }
}

/// Writes frames to a video file (H.264 in .mp4/.mov/.mkv, Motion JPEG in .avi), or, for an
/// image path, the single frame as an image.
package final class AnnotatedOutput {
    package let path: String
    /// H.264 through FFmpeg's encoder at a fast preset (``EncodedVideoFile``).
    private var encoded: EncodedVideoFile?
    /// OpenCV's writer: Motion JPEG in .avi, and sizes the H.264 encoder cannot take (odd ones).
    private var writer: OpaquePointer?
    private var isImage = false
    private var stillWritten = false

    /// An output at `path` for frames of `size` at `framesPerSecond`. The folder must exist.
    package init(path: String, size: ImageSize, framesPerSecond: Double) throws(OpenCVError) {
        self.path = path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue), message: "\(path) is a folder; give a file name (.mp4, .mov, .avi or an image)")
        }
        do {
            try OutputFile.refuseInput(path)
        } catch {
            throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue), message: error.description)
        }
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue), message: "cannot write \(path): its folder \(folder) does not exist")
        }
        if MediaFile.isImage(path) {
            isImage = true
            return
        }
        let videoExtensions = ["mp4", "mov", "mkv", "m4v", "avi"]
        guard videoExtensions.contains((path as NSString).pathExtension.lowercased()) else {
            throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue),
                              message: "cannot write \(path): its name must end in .mp4, .mov, .mkv or .avi (a video) or an image's extension (.png, .jpg)")
        }
        let rate = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 30
        let isAVI = (path as NSString).pathExtension.lowercased() == "avi"
        var lastError = OpenCVError(dcv_status())
        if !isAVI, size.width % 2 == 0, size.height % 2 == 0 {
            do {
                encoded = try EncodedVideoFile(path: path, size: size, framesPerSecond: rate)
                return
            } catch { lastError = error }
        }
        // Motion JPEG in .avi; otherwise OpenCV's H.264, else MPEG-4 part 2.
        let fourccs = isAVI ? ["MJPG"] : ["avc1", "mp4v"]
        var opened: OpaquePointer?
        for fourcc in fourccs where opened == nil {
            do {
                opened = try checkedHandle {
                    dcv_writer_open(path, fourcc, rate, Int32(size.width), Int32(size.height), $0)
                }
            } catch { lastError = error }
        }
        guard let opened else { throw OpenCVError(code: lastError.code, message: "\(path): \(lastError.message) (does its folder exist and can it be written?)") }
        writer = opened
    }

    deinit { close() }

    /// Finishes the file (the end of a video is written); later frames are not written.
    package func close() {
        if let writer { dcv_writer_destroy(writer) }
        writer = nil
        try? encoded?.close()
        encoded = nil
        stillWritten = true
    }

    package func write(_ image: Image) throws(OpenCVError) {
        if let encoded {
            try encoded.write(image)
        } else if let writer {
            try checkedCount { dcv_writer_write(writer, image.handle, $0) }
        } else if isImage && !stillWritten {
            try image.write(to: path)
            stillWritten = true
        }
    }
}

/// A live preview window (OpenCV highgui). Opens only where a display is reachable.
package final class PreviewWindow {
    package let title: String
    private var failed = false

    private init(title: String) { self.title = title }

    /// Why no window can be shown here, or `nil` when one can: an X display named by DISPLAY
    /// whose socket exists (or a remote one), or a Wayland display.
    package static func unavailableReason(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty { return nil }
        guard let display = environment["DISPLAY"], !display.isEmpty else { return "no display (DISPLAY is not set)" }
        if display.hasPrefix(":") {
            let number = display.dropFirst().prefix { $0.isNumber }
            if !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") { return "display \(display) is not running" }
        }
        return nil
    }

    /// A window, or `nil` with one line on stderr saying why there is none (the run goes on).
    package static func open(title: String) -> PreviewWindow? {
        if let reason = unavailableReason() {
            FileHandle.standardError.write(Data("docktrack: --preview: \(reason); running without a preview\n".utf8))
            return nil
        }
        return PreviewWindow(title: title)
    }

    /// Shows a frame; `false` when the user pressed q or Escape to stop.
    package func show(_ image: Image) -> Bool {
        guard !failed else { return true }
        var status = dcv_status()
        let key = dcv_window_show(title, image.handle, 1, &status)
        if key == -2 {
            failed = true
            FileHandle.standardError.write(Data("docktrack: --preview: \(OpenCVError(status).message); running without a preview\n".utf8))
            return true
        }
        return key != Int32(UInt8(ascii: "q")) && key != 27
    }

    deinit { dcv_window_close(title) }
}
