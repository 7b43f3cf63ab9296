import DockTrackCore
import DockTrackMedia
import CDockCV

/// A picture shrunk to cells: each cell the mean gray of `cellSize` x `cellSize` pixels. Two of
/// them say where the picture changed between their frames (``MotionRegions``).
package struct MotionCells: Sendable, Equatable {
    package let columns: Int
    package let rows: Int
    /// Row by row, top row first: one gray value per cell.
    package let values: [UInt8]

    package init(columns: Int, rows: Int, values: [UInt8]) {
        precondition(columns > 0 && rows > 0 && values.count == columns * rows, "cells and their count disagree")
        self.columns = columns
        self.rows = rows
        self.values = values
    }

    /// The cells of `image` (BGR or gray): shrunk bilinearly to twice the cells each way, made
    /// gray, then area-averaged to the cells (each cell the mean of 16 samples of its pixels:
    /// 1280x720 in about a tenth of the time an area shrink of every pixel takes). An image
    /// smaller than a cell is one cell.
    package init(of image: Image, cellSize: Int) throws(OpenCVError) {
        let size = ImageSize(width: max(1, image.width / max(1, cellSize)), height: max(1, image.height / max(1, cellSize)))
        var small = image
        if image.width > 4 * size.width || image.height > 4 * size.height {
            small = try small.resized(to: ImageSize(width: 2 * size.width, height: 2 * size.height), interpolation: .bilinear)
        }
        if small.channels != 1 { small = try small.gray(equalized: false) }
        small = try small.resized(to: size)
        guard let base = dcv_image_pixels(small.handle) else {
            throw OpenCVError(code: Int32(DCV_ERR_ARGUMENT.rawValue), message: "an empty image has no cells")
        }
        let stride = dcv_image_stride(small.handle)
        var values = [UInt8](repeating: 0, count: size.width * size.height)
        for row in 0..<size.height {
            for column in 0..<size.width { values[row * size.width + column] = base[row * stride + column] }
        }
        self.init(columns: size.width, rows: size.height, values: values)
    }
}

/// Where the picture moved between two looks at it, as rectangles for a detector to search
/// (Frigate searches its motion regions only, for the same reason): on a still camera, a new
/// person walks in, and what stands still was found before. The cells whose gray changed by
/// more than ``Params/threshold`` are grown by a cell and joined into rectangles (8-connected).
/// When more than ``Params/maximumMovingShare`` of the cells changed (the camera turned, the
/// light changed, a cut), there are no regions: the whole picture is to be searched.
package enum MotionRegions {
    package struct Params: Sendable, Equatable {
        /// Pixels per cell side (8: a 768x576 frame is 96x72 cells; a cell is a tenth of a
        /// 70 px pedestrian's height).
        package var cellSize = 8
        /// A cell moved when its mean gray changed by more than this (of 255). Averaging 64
        /// pixels takes a webcam's noise well below it. (vtest.avi's labelled walks gave the
        /// same at 10, 15 and 20.)
        package var threshold = 15
        /// More than this share of the cells moved: search everything.
        package var maximumMovingShare = 0.5
        package init() {}
    }

    /// The moving rectangles (unit coordinates, lower-left origin) between `earlier` and `now`;
    /// `nil` when everything is to be searched (the cells disagree in size, or too much moved).
    /// Cells whose middle is inside one of `explained` (unit, lower-left origin) moved for a
    /// reason already known and are left out, after the share that moved is counted.
    package static func regions(from earlier: MotionCells, to now: MotionCells, params: Params = Params(),
                               explained: [UnitRect] = []) -> [UnitRect]? {
        guard earlier.columns == now.columns, earlier.rows == now.rows else { return nil }
        let columns = now.columns, rows = now.rows
        var moved = [Bool](repeating: false, count: columns * rows)
        var count = 0
        for index in moved.indices where abs(Int(now.values[index]) - Int(earlier.values[index])) > params.threshold {
            moved[index] = true
            count += 1
        }
        guard Double(count) <= params.maximumMovingShare * Double(moved.count) else { return nil }
        for known in explained where [known.x, known.y, known.width, known.height].allSatisfy(\.isFinite) {
            let upperLeft = UnitRect(upperLeftOrigin: known.clippedToUnit())  // the same flip both ways
            let c0 = max(0, Int((upperLeft.minX * Double(columns)).rounded())), c1 = min(columns, Int((upperLeft.maxX * Double(columns)).rounded()))
            let r0 = max(0, Int((upperLeft.minY * Double(rows)).rounded())), r1 = min(rows, Int((upperLeft.maxY * Double(rows)).rounded()))
            guard c0 < c1, r0 < r1 else { continue }
            for row in r0..<r1 { for column in c0..<c1 { moved[row * columns + column] = false } }
        }
        // Grown by a cell: a walker's edges, and the cells between two limbs.
        var grown = moved
        for row in 0..<rows {
            for column in 0..<columns where moved[row * columns + column] {
                for r in max(0, row - 1)...min(rows - 1, row + 1) {
                    for c in max(0, column - 1)...min(columns - 1, column + 1) { grown[r * columns + c] = true }
                }
            }
        }
        // Joined: one rectangle around each 8-connected group of cells.
        var seen = [Bool](repeating: false, count: grown.count)
        var rectangles: [UnitRect] = []
        var stack: [Int] = []
        for start in grown.indices where grown[start] && !seen[start] {
            seen[start] = true
            stack.append(start)
            var left = columns, right = -1, top = rows, bottom = -1
            while let index = stack.popLast() {
                let row = index / columns, column = index % columns
                left = min(left, column); right = max(right, column)
                top = min(top, row); bottom = max(bottom, row)
                for r in max(0, row - 1)...min(rows - 1, row + 1) {
                    for c in max(0, column - 1)...min(columns - 1, column + 1) where grown[r * columns + c] && !seen[r * columns + c] {
                        seen[r * columns + c] = true
                        stack.append(r * columns + c)
                    }
                }
            }
            let upperLeft = UnitRect(x: Double(left) / Double(columns), y: Double(top) / Double(rows),
                                     width: Double(right - left + 1) / Double(columns), height: Double(bottom - top + 1) / Double(rows))
            rectangles.append(UnitRect(upperLeftOrigin: upperLeft))
        }
        return rectangles
    }
}

/// A rectangle of whole pixels of a detector's working picture (top-left origin): where a
/// region search (``RegionLimitedDetector``) looks.
struct SearchArea: Equatable {
    var x, y, width, height: Int
    var maxX: Int { x + width }
    var maxY: Int { y + height }
    var pixelRect: PixelRect { PixelRect(x: Double(x), y: Double(y), width: Double(width), height: Double(height)) }

    func overlaps(_ other: SearchArea) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }

    func union(_ other: SearchArea) -> SearchArea {
        let x0 = min(x, other.x), y0 = min(y, other.y)
        return SearchArea(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }

    /// Where to look for things overlapping `regions` (unit, lower-left origin) in a working
    /// picture of `size`: each region grown on each side by what `grow` says for it (in
    /// pixels), cut to the picture, at least `minimum` large (pushed back inside where cut at
    /// its edge), and overlapping ones joined. `nil`, the whole picture, when they would cover
    /// more than `maximumShare` of it anyway (one search costs less than many that overlap), or
    /// when a region is no number (it says nothing of where to look).
    static func around(_ regions: [UnitRect], in size: ImageSize, minimum: ImageSize, maximumShare: Double,
                       grow: (PixelRect) -> (x: Double, y: Double)) -> [SearchArea]? {
        var areas: [SearchArea] = []
        for region in regions {
            guard [region.x, region.y, region.width, region.height].allSatisfy(\.isFinite) else { return nil }
            let r = region.clippedToUnit().pixelRect(in: size)
            let by = grow(r)
            var x0 = max(0, Int((r.x - by.x).rounded(.down))), x1 = min(size.width, Int((r.x + r.width + by.x).rounded(.up)))
            var y0 = max(0, Int((r.y - by.y).rounded(.down))), y1 = min(size.height, Int((r.y + r.height + by.y).rounded(.up)))
            if x1 - x0 < minimum.width { x0 = max(0, min(x0, size.width - minimum.width)); x1 = min(size.width, x0 + minimum.width) }
            if y1 - y0 < minimum.height { y0 = max(0, min(y0, size.height - minimum.height)); y1 = min(size.height, y0 + minimum.height) }
            guard x1 > x0, y1 > y0 else { continue }
            var area = SearchArea(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
            // Joined with every area it overlaps, until none does.
            while let index = areas.firstIndex(where: { $0.overlaps(area) }) {
                area = area.union(areas.remove(at: index))
            }
            areas.append(area)
        }
        let covered = areas.reduce(0) { $0 + $1.width * $1.height }
        return Double(covered) > maximumShare * Double(size.width * size.height) ? nil : areas
    }
}
