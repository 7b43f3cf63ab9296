import DockTrack
import Foundation
import Testing

/// The batch report over names and lines a hostile or careless user gives it: a file name is
/// text on the page and a working link, never markup; a result line with a huge number is one
/// failure in the report, not the end of it.
@Suite(.onTestThreads) struct BatchReportTests {
    /// A batch folder whose results name copies of carphone under `names`, plus `extra` lines.
    static func batch(names: [String], extra: [String: String]) throws -> String {
        let folder = try Fixtures.temporaryFolder().path
        for name in names {
            let video = "\(folder)/\(name).mp4"
            try FileManager.default.copyItem(atPath: Fixtures.sample("carphone_pristine.mp4"), toPath: video)
            let line = try JSONSerialization.data(withJSONObject: ["input": video, "output": video, "status": "ok", "frames": 30,
                                                                   "seconds": 1.0, "realTime": 1.0, "sound": "copied"])
            try line.write(to: URL(fileURLWithPath: "\(folder)/\(name).json"))
        }
        for (name, line) in extra { try Data(line.utf8).write(to: URL(fileURLWithPath: "\(folder)/\(name).json")) }
        return folder
    }

    @Test func fileNamesAreTextOnThePageAndTheirPicturesLoad() throws {
        let names = ["x\" onerror=\"alert(document.domain)\" y=\"", "Talk #3", "q?a", "it's 100%"]
        let folder = try Self.batch(names: names, extra: [:])
        let report = try BatchReport(folder: folder)
        #expect(report.done.count == 4)
        let page = try String(contentsOfFile: try report.writePage(pictures: 2, height: 40), encoding: .utf8)
        #expect(!page.contains("onerror=\""), "an attribute made from a file name")
        #expect(!page.contains("it's"), "a quote left as it is")
        let sources = page.components(separatedBy: "<img src=\"report/").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(sources.count == 4 * 2 * 2, "\(sources.count) pictures")
        for source in sources {
            #expect(source.allSatisfy { $0.isLetter || $0.isNumber || "-._~%".contains($0) }, "\(source)")
            let file = try #require(source.removingPercentEncoding)
            #expect(FileManager.default.fileExists(atPath: "\(folder)/report/\(file)"), "\(source) -> \(file)")
        }
    }

    @Test(arguments: ["9223372036854775807", "-1", "1e308", "\"many\"", "[1]"])
    func aResultLineWithABadNumberIsOneFailure(frames: String) throws {
        let folder = try Self.batch(names: ["good"], extra: [
            "huge": "{\"input\":\"v.mp4\",\"output\":\"v.mp4\",\"status\":\"ok\",\"frames\":\(frames),\"seconds\":1,\"realTime\":1}",
            "garbage": "\u{0}\u{1}not json",
        ])
        let report = try BatchReport(folder: folder)
        #expect(report.lines.first == "3 files: 1 reframed, 2 failed", "\(report.lines)")
        #expect(report.lines.contains { $0.contains("huge.json") && $0.contains("frames is not a number") }, "\(report.lines)")
        _ = try report.writePage(pictures: 2, height: 40)
    }
}
