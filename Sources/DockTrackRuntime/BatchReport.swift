import DockTrackCore
import DockTrackMedia
import DockTrackSystem
import Foundation

/// What a batch of `reframe` runs did (tools/reframe-batch.sh's OUTDIR: one JSON line per input,
/// `NAME.json`, and the reframed videos): the counts, the failures with their errors, the video
/// time reframed, the batch's wall time and its speed; and a page a person reads, with a strip
/// of pictures from each reframed video beside the same moments of its source.
package struct BatchReport {
    /// One input's line.
    package struct Entry {
        package var name: String
        package var input: String
        package var output: String?
        package var ok: Bool
        /// The failure's error, or the run's sound (copied, none, dropped).
        package var detail: String
        package var frames: Int
        /// Seconds of video reframed, and of work.
        package var videoSeconds: Double
        package var workSeconds: Double
        /// When the line was written (the run's end).
        package var finished: Date
    }

    package var folder: String
    package var entries: [Entry]

    package struct Unreadable: Error, CustomStringConvertible {
        package var description: String
    }

    /// The most frames, and seconds, a result line may say: a year of video at 30 fps. A line
    /// past them (a huge or negative number, not a number) is not a result.
    package static let largestFrames = 1_000_000_000
    package static let largestSeconds = 1e9

    /// A report of `entries` (the fuzz target's).
    package init(folder: String, entries: [Entry]) {
        self.folder = folder
        self.entries = entries
    }

    /// Reads every `*.json` of `folder`. A file that is not a batch result line is kept as a
    /// failure that says so (the report goes on for the others).
    package init(folder: String) throws {
        self.folder = folder
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw Unreadable(description: "\(folder): not a folder of batch results")
        }
        guard !names.isEmpty else { throw Unreadable(description: "\(folder): no results (NAME.json) in it") }
        entries = names.map { name in
            let path = "\(folder)/\(name)"
            let finished = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? Date()
            do throws(Unreadable) {
                return try Self.entry(named: String(name.dropLast(5)), line: Self.smallFile(path), finished: finished)
            } catch {
                return Entry(name: String(name.dropLast(5)), input: path, output: nil, ok: false,
                             detail: "not a batch result line: \(error.description)", frames: 0, videoSeconds: 0, workSeconds: 0,
                             finished: finished)
            }
        }
    }

    /// The contents of a result file, at most 64 KiB (a line is a few hundred bytes).
    static func smallFile(_ path: String) throws(Unreadable) -> Data {
        do { return Data(try SmallTextFile.read(path, largest: 65_536).utf8) } catch { throw Unreadable(description: error.reason) }
    }

    /// One input's entry from its result line's bytes; what is wrong with it otherwise.
    package static func entry(named name: String, line data: Data, finished: Date) throws(Unreadable) -> Entry {
        guard let line = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw Unreadable(description: "no JSON object") }
        guard let input = line["input"] as? String, let status = line["status"] as? String else {
            throw Unreadable(description: "no input or status")
        }
        func number(_ key: String, largest: Double) throws(Unreadable) -> Double {
            guard let value = line[key] else { return 0 }
            guard let number = value as? NSNumber, number.doubleValue.isFinite,
                  (0...largest).contains(number.doubleValue) else {
                throw Unreadable(description: "\(key) is not a number from 0 to \(largest)")
            }
            return number.doubleValue
        }
        let seconds = try number("seconds", largest: largestSeconds)
        let realTime = try number("realTime", largest: largestSeconds)
        let frames = try number("frames", largest: Double(largestFrames))
        return Entry(name: name, input: input, output: line["output"] as? String, ok: status == "ok",
                     detail: status == "ok" ? line["sound"] as? String ?? "" : line["error"] as? String ?? "no error given",
                     frames: Int(frames), videoSeconds: min(realTime * seconds, largestSeconds), workSeconds: seconds, finished: finished)
    }

    package var done: [Entry] { entries.filter(\.ok) }
    package var failed: [Entry] { entries.filter { !$0.ok } }
    /// Seconds of video reframed.
    package var videoSeconds: Double { done.map(\.videoSeconds).reduce(0, +) }
    /// From the first run's start to the last one's end.
    package var wallSeconds: Double {
        guard let end = done.map(\.finished).max(),
              let start = done.map({ $0.finished.addingTimeInterval(-$0.workSeconds) }).min() else { return 0 }
        return end.timeIntervalSince(start)
    }

    /// The report as text: counts, time, speed, then each failure with its error.
    package var lines: [String] {
        var lines = ["\(entries.count) files: \(done.count) reframed, \(failed.count) failed",
                     String(format: "%.1f s of video reframed in %.1f s of wall time: %.2fx real time (%.1f s of work)",
                            videoSeconds, wallSeconds, wallSeconds > 0 ? videoSeconds / wallSeconds : 0, done.map(\.workSeconds).reduce(0, +))]
        for entry in failed { lines.append("failed: \(entry.input): \(TerminalText.line(entry.detail))") }
        return lines
    }

    /// Writes `report.html` and its pictures (`report/`) into the folder: for each file reframed,
    /// `pictures` moments of the reframed video beside the same moments of its source. The
    /// page's path.
    package func writePage(pictures: Int = 6, height: Int = 120) throws -> String {
        let pictureFolder = "\(folder)/report"
        try FileManager.default.createDirectory(atPath: pictureFolder, withIntermediateDirectories: true)
        var rows = ""
        for entry in done {
            guard let output = entry.output else { continue }
            let reframed = try Self.strip(of: output, count: pictures, height: height, into: pictureFolder, named: "\(entry.name)-reframed")
            let source = try Self.strip(of: entry.input, count: pictures, height: height, into: pictureFolder, named: "\(entry.name)-source",
                                        frames: entry.frames)
            rows += """
                <section><h2>\(Self.escaped((entry.input as NSString).lastPathComponent))</h2>
                <p>\(Self.escaped(entry.input)) → \(Self.escaped(output)): \(entry.frames) frames, \(String(format: "%.1f s in %.1f s", entry.videoSeconds, entry.workSeconds)), sound \(Self.escaped(entry.detail))</p>
                <div class="strip">\(source.map { "<img src=\"report/\(Self.urlEscaped($0))\" alt=\"source\">" }.joined())</div>
                <div class="strip">\(reframed.map { "<img src=\"report/\(Self.urlEscaped($0))\" alt=\"reframed\">" }.joined())</div>
                </section>

                """
        }
        let failures = failed.map { "<li>\(Self.escaped($0.input)): \(Self.escaped($0.detail))</li>" }.joined(separator: "\n")
        let page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Batch report: \(Self.escaped(folder))</title>
            <style>body{font:15px system-ui,sans-serif;margin:16px;background:#111;color:#eee} .strip{display:flex;gap:4px;margin:4px 0}
            .strip img{height:\(height)px} section{margin-bottom:24px} li{color:#f99}</style></head><body>
            <h1>Batch report</h1>
            <p>\(lines.prefix(2).map(Self.escaped).joined(separator: "<br>"))</p>
            \(failed.isEmpty ? "" : "<h2>Failed</h2><ul>\n\(failures)\n</ul>")
            <p>Each file: its source (top) and the reframed video (below) at the same moments.</p>
            \(rows)</body></html>

            """
        let path = "\(folder)/report.html"
        try Data(page.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return path
    }

    /// `count` pictures spread over the video at `path` (over its first `frames` when given),
    /// `height` pixels high, written as JPEG into `folder`; their file names.
    static func strip(of path: String, count: Int, height: Int, into folder: String, named name: String, frames: Int? = nil) throws -> [String] {
        var source = try MediaFile.open(path)
        let total = frames ?? source.info.frameCount ?? 0
        guard total > 0 else { return [] }
        let wanted = Set((0..<count).map { Int((Double($0) + 0.5) * Double(total) / Double(max(1, count))) })
        var names: [String] = []
        var index = 0
        while index <= wanted.max() ?? 0, let frame = try source.nextFrame() {
            defer { index += 1 }
            guard wanted.contains(index) else { continue }
            let size = frame.image.size
            let small = try frame.image.resized(to: ImageSize(width: max(1, size.width * height / max(1, size.height)), height: height))
            let file = "\(name)-\(names.count).jpg"
            try small.write(to: "\(folder)/\(file)")
            names.append(file)
        }
        return names
    }

    /// `text` safe inside an HTML element or a quoted attribute.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }

    /// A file name as one path segment of a URL: every byte but letters, digits and `-._~`
    /// percent-encoded (`#`, `?`, `%`, quotes and spaces included).
    static func urlEscaped(_ name: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        return name.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
    }
}
