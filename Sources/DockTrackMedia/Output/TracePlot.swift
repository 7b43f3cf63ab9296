import CDockCV
import Foundation

/// Plots a tab-separated trace (a header line, then one line per sample; the first column is
/// the time in seconds) as a PNG: one panel for pan, one for tilt (both in degrees, with their
/// targets), one for speeds and commands (degrees per second), one per other numeric column.
/// Reads the traces of `docktrack track --trace`, `docktrack simulate --trace` and `docksim --trace`.
package struct TracePlot {
    package struct Series {
        package var name: String
        package var values: [Double?]
    }

    package struct Panel {
        package var title: String
        package var series: [Series]
    }

    package let times: [Double]
    package let panels: [Panel]

    /// Why a trace cannot be plotted.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Parses `text`; angle columns (pan, tilt, ...) are turned from radians into degrees.
    package init(tsv text: String, name: String = "trace") throws(Failure) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first, header.count >= 2, header[0] == "time" else {
            throw Failure(description: "\(name): not a trace (the first line must be a tab-separated header starting with 'time')")
        }
        guard header.count <= Self.mostColumns else {
            throw Failure(description: "\(name): \(header.count) columns, more than the \(Self.mostColumns) a trace has room for")
        }
        let rows = lines.dropFirst().filter { $0.count == header.count }
        guard rows.count >= 2 else { throw Failure(description: "\(name): fewer than 2 samples to plot") }
        var times: [Double] = []
        for (i, row) in rows.enumerated() {
            guard let t = Double(row[0]), t.isFinite, abs(t) <= Self.largestValue else {
                throw Failure(description: "\(name) line \(i + 2): time '\(row[0])' is not a number of seconds")
            }
            if let last = times.last, t < last {
                throw Failure(description: "\(name) line \(i + 2): time goes backwards (\(row[0]) after \(last))")
            }
            times.append(t)
        }
        self.times = times
        var columns: [Series] = []
        for (c, column) in header.enumerated().dropFirst() {
            // A value that is no finite number of sensible size is a gap in its line.
            let values = rows.map { Double($0[c]).flatMap { $0.isFinite && abs($0) <= Self.largestValue ? $0 : nil } }
            guard values.contains(where: { $0 != nil }) else { continue }  // text columns (state)
            let isAngle = ["pan", "tilt", "speed", "command"].contains { column.contains($0) }
            columns.append(Series(name: column, values: isAngle ? values.map { $0.map { $0 * 180 / .pi } } : values))
        }
        func take(_ test: (String) -> Bool) -> [Series] { columns.filter { test($0.name) } }
        let speeds = take { $0.contains("speed") || $0.contains("command") }
        let pan = take { $0.contains("pan") && !speeds.map(\.name).contains($0) }
        let tilt = take { $0.contains("tilt") && !speeds.map(\.name).contains($0) }
        let used = Set((speeds + pan + tilt).map(\.name))
        var panels = [Panel(title: "pan (degrees)", series: pan), Panel(title: "tilt (degrees)", series: tilt),
                      Panel(title: "speed (degrees/s)", series: speeds)]
        panels += columns.filter { !used.contains($0.name) }.map { Panel(title: $0.name, series: [$0]) }
        self.panels = panels.filter { !$0.series.isEmpty }
    }

    /// The most columns plotted (a panel each, 180 px tall; DockTrack's traces have about 10).
    package static let mostColumns = 64

    /// The largest value and time plotted (a trace's angles, speeds and seconds are far smaller).
    static let largestValue = 1e12

    /// A pixel coordinate from a computed position, kept within drawing range.
    static func pixel(_ position: Double) -> Int32 {
        position.isFinite ? Int32(max(-100_000, min(100_000, position))) : 0
    }

    static let colors: [BGR] = [BGR(blue: 200, green: 90, red: 20), BGR(blue: 40, green: 160, red: 40),
                                BGR(blue: 30, green: 30, red: 210), BGR(blue: 160, green: 60, red: 160)]

    /// Draws the plot into a new image `width` pixels wide, 180 pixels per panel.
    package func render(width: Int = 960) throws(OpenCVError) -> Image {
        let panelHeight = 180, margin = (left: 70, right: 20, top: 26, bottom: 22)
        let height = panelHeight * panels.count + 24
        let image = Image(taking: try checkedHandle { dcv_image_filled(Int32(width), Int32(height), 255, 255, 255, $0) })
        let t0 = times.first!, t1 = max(times.last!, t0 + 1e-9)
        for (p, panel) in panels.enumerated() {
            let top = p * panelHeight + margin.top, bottom = (p + 1) * panelHeight - margin.bottom
            let left = margin.left, right = width - margin.right
            let all = panel.series.flatMap { $0.values.compactMap { $0 } }
            var low = all.min() ?? 0, high = all.max() ?? 1
            if high - low < 1e-6 { low -= 1; high += 1 }
            let pad = (high - low) * 0.08
            low -= pad; high += pad
            func x(_ t: Double) -> Int32 { Self.pixel(Double(left) + (t - t0) / (t1 - t0) * Double(right - left)) }
            func y(_ v: Double) -> Int32 { Self.pixel(Double(bottom) - (v - low) / (high - low) * Double(bottom - top)) }
            dcv_image_draw_rect(image.handle, Int32(left), Int32(top), Int32(right - left), Int32(bottom - top), 160, 160, 160, 1)
            if low < 0 && high > 0 { dcv_image_draw_line(image.handle, Int32(left), y(0), Int32(right), y(0), 210, 210, 210, 1) }
            dcv_image_draw_text(image.handle, panel.title, Int32(left), Int32(top - 8), 0.5, 0, 0, 0, 1)
            dcv_image_draw_text(image.handle, String(format: "%.4g", high - pad), 4, Int32(top + 12), 0.4, 80, 80, 80, 1)
            dcv_image_draw_text(image.handle, String(format: "%.4g", low + pad), 4, Int32(bottom), 0.4, 80, 80, 80, 1)
            var legendX = Int32(left + 180)
            for (s, series) in panel.series.enumerated() {
                let color = Self.colors[s % Self.colors.count]
                var previous: (Int32, Int32)?
                for (i, value) in series.values.enumerated() {
                    guard let value else { previous = nil; continue }
                    let point = (x(times[i]), y(value))
                    if let previous {
                        dcv_image_draw_line(image.handle, previous.0, previous.1, point.0, point.1, Int32(color.blue), Int32(color.green), Int32(color.red), 1)
                    }
                    previous = point
                }
                dcv_image_draw_line(image.handle, legendX, Int32(top - 12), legendX + 16, Int32(top - 12), Int32(color.blue), Int32(color.green), Int32(color.red), 2)
                dcv_image_draw_text(image.handle, series.name, legendX + 20, Int32(top - 8), 0.4, 0, 0, 0, 1)
                legendX += Int32(30 + 8 * series.name.count)
            }
        }
        let axis = String(format: "time: %.1f s ... %.1f s", t0, t1)
        dcv_image_draw_text(image.handle, axis, Int32(margin.left), Int32(height - 6), 0.45, 0, 0, 0, 1)
        return image
    }
}
