import DockTrackCore
import DockTrackMedia
import Foundation

/// Face boxes a person drew on pictures, in dlib's imglab XML (`<image file='a.jpg'><box
/// top='181' left='274' width='52' height='53'/>…</image>`; a box with `ignore='1'` neither
/// counts as missed nor as false when found). Files are relative to the XML's folder.
package struct LabelledImage: Sendable, Equatable {
    package var path: String
    package var boxes: [PixelRect]
    package var ignored: [PixelRect]

    package init(path: String, boxes: [PixelRect], ignored: [PixelRect] = []) {
        self.path = path
        self.boxes = boxes
        self.ignored = ignored
    }

    /// The images of a dlib XML file.
    package static func read(dlibXML path: String) throws(FrameSourceError) -> [LabelledImage] {
        guard let text = try? String(contentsOfFile: path, encoding: .isoLatin1) else { throw .fileNotFound(path: path) }
        let folder = (path as NSString).deletingLastPathComponent
        func attribute(_ name: String, in tag: Substring) -> String? {
            for quote in ["'", "\""] {
                guard let start = tag.range(of: " \(name)=\(quote)") else { continue }
                let rest = tag[start.upperBound...]
                guard let end = rest.firstIndex(of: Character(quote)) else { return nil }
                return String(rest[..<end])
            }
            return nil
        }
        var images: [LabelledImage] = []
        for chunk in text.components(separatedBy: "<image ").dropFirst() {
            let tags = chunk.split(separator: "<")
            guard let file = attribute("file", in: " " + tags[0]) else { throw .unreadable(path: path, reason: "an <image> without file=") }
            var image = LabelledImage(path: (folder as NSString).appendingPathComponent(file), boxes: [])
            for tag in tags.dropFirst() where tag.hasPrefix("box ") {
                let numbers = ["left", "top", "width", "height"].map { attribute($0, in: " " + tag).flatMap(Double.init) }
                guard numbers.allSatisfy({ $0 != nil }) else { throw .unreadable(path: path, reason: "a <box> of \(file) without left, top, width and height") }
                let box = PixelRect(x: numbers[0]!, y: numbers[1]!, width: numbers[2]!, height: numbers[3]!)
                if attribute("ignore", in: " " + tag) == "1" { image.ignored.append(box) } else { image.boxes.append(box) }
            }
            images.append(image)
        }
        guard !images.isEmpty else {
            throw .unreadable(path: path, reason: "no <image file='...'> in it: not dlib's imglab XML (for a clip's people: --clip FILE --mot LABELS)")
        }
        return images
    }
}

/// How well found faces match labelled ones: each labelled face is matched to at most one found
/// face (best overlap first, intersection over union at least ``minimumOverlap``); a found face
/// matched to nothing, and not on an ignored box, is false.
package struct DetectionScore: Sendable, Equatable {
    package static let minimumOverlap = 0.3
    package var images = 0
    package var faces = 0
    package var found = 0
    package var falseFaces = 0
    package var seconds = 0.0

    package init() {}

    package var recall: Double { faces == 0 ? 1 : Double(found) / Double(faces) }
    package var precision: Double { found + falseFaces == 0 ? 1 : Double(found) / Double(found + falseFaces) }

    /// Scores the faces found in one picture of `size` against the labelled ones; `seconds` the time it took.
    package mutating func add(found detected: [UnitRect], labelled: [PixelRect], ignored: [PixelRect] = [], size: ImageSize, seconds: Double) {
        images += 1
        faces += labelled.count
        self.seconds += seconds
        let truth = labelled.map { UnitRect($0, in: size) }, skip = ignored.map { UnitRect($0, in: size) }
        var pairs: [(overlap: Double, found: Int, truth: Int)] = []
        for (i, d) in detected.enumerated() {
            for (j, t) in truth.enumerated() {
                let overlap = d.intersectionOverUnion(t)
                if overlap >= Self.minimumOverlap { pairs.append((overlap, i, j)) }
            }
        }
        var usedFound = Set<Int>(), usedTruth = Set<Int>()
        for pair in pairs.sorted(by: { $0.overlap > $1.overlap }) where !usedFound.contains(pair.found) && !usedTruth.contains(pair.truth) {
            usedFound.insert(pair.found)
            usedTruth.insert(pair.truth)
        }
        found += usedTruth.count
        for (i, d) in detected.enumerated() where !usedFound.contains(i) {
            if !skip.contains(where: { d.intersectionOverUnion($0) >= Self.minimumOverlap }) { falseFaces += 1 }
        }
    }

    /// `{"images":9,"faces":43,"found":41,"falseFaces":1,"recall":0.953,"precision":0.976,"msPerImage":…}`
    package var jsonLine: String {
        var line = JSONLine()
        line.add("images", images)
        line.add("faces", faces)
        line.add("found", found)
        line.add("falseFaces", falseFaces)
        line.add("recall", recall, digits: 3)
        line.add("precision", precision, digits: 3)
        line.add("msPerImage", images == 0 ? 0 : seconds / Double(images) * 1000, digits: 1)
        return line.text
    }
}

extension LabelledImage {
    /// The pictures laid out on one canvas of `width` pixels (rows left to right, top to bottom,
    /// black between), faces unchanged in pixels: how a detector does on small faces in a large frame.
    package static func canvas(of labelled: [LabelledImage], width: Int) throws -> (image: Image, labels: LabelledImage) {
        let images = try labelled.map { try Image(contentsOf: $0.path) }
        var places: [PixelPoint] = []
        var x = 0, y = 0, rowHeight = 0
        for image in images {
            if x > 0 && x + image.width > width { x = 0; y += rowHeight; rowHeight = 0 }
            guard image.width <= width else { throw FrameSourceError.unreadable(path: "canvas", reason: "an image wider than \(width) px") }
            places.append(PixelPoint(x: Double(x), y: Double(y)))
            x += image.width
            rowHeight = max(rowHeight, image.height)
        }
        let size = ImageSize(width: width, height: y + rowHeight)
        let canvas = try Image.composed(size: size, placing: Array(zip(images, places)))
        var all = LabelledImage(path: "canvas", boxes: [])
        for (labels, place) in zip(labelled, places) {
            all.boxes += labels.boxes.map { PixelRect(x: $0.x + place.x, y: $0.y + place.y, width: $0.width, height: $0.height) }
            all.ignored += labels.ignored.map { PixelRect(x: $0.x + place.x, y: $0.y + place.y, width: $0.width, height: $0.height) }
        }
        return (canvas, all)
    }
}
