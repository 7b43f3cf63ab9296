import DockTrack
import Foundation
import Testing

/// The batch recipe run by a real scheduler: a one-node Slurm cluster on this machine
/// (tools/slurm-local.sh: munged, slurmctld, slurmd) runs tools/reframe-batch.sh as a job array
/// over a manifest of real clips, a corrupt file, a missing one and two files of the same name in
/// two folders.
@Suite(.serialized, .serializedOnTestThreads) struct SlurmBatchTests {
    static let cluster = Fixtures.root.appendingPathComponent("tools/slurm-local.sh").path
    static let batch = Fixtures.root.appendingPathComponent("tools/reframe-batch.sh").path

    /// A Slurm client command against the cluster in `folder`.
    static func slurm(_ command: String, _ arguments: [String], cluster folder: String,
                      environment: [String: String?] = [:]) throws -> ToolRun {
        try ToolRun.run("/usr/bin/\(command)", arguments, environment: environment.merging(["SLURM_CONF": "\(folder)/slurm.conf"]) { $1 })
    }

    /// Each output's JSON line, by file name.
    static func results(in folder: String) throws -> [String: [String: Any]] {
        var results: [String: [String: Any]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".json") {
            let text = try String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8)
            results[name] = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        }
        return results
    }

    @Test func aJobArrayReframesTheGoodFilesReportsTheBadOnesAndResumes() throws {
        let folder = try Fixtures.temporaryFolder()
        let clusterFolder = folder.appendingPathComponent("slurm").path
        let started = try ToolRun.run("/bin/bash", [Self.cluster, "start", clusterFolder])
        defer { _ = try? ToolRun.run("/bin/bash", [Self.cluster, "stop", clusterFolder]) }
        try #require(started.status == 0, "the cluster: \(started.stderr)")

        // The manifest: three real clips (two of them clip.mp4, in two folders), a corrupt file
        // and a missing one.
        let one = folder.appendingPathComponent("one"), two = folder.appendingPathComponent("two")
        for place in [one, two] { try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(atPath: Fixtures.sample("carphone_pristine.mp4"), toPath: one.appendingPathComponent("clip.mp4").path)
        try FileManager.default.copyItem(atPath: Fixtures.sample("vtest-small.mp4"), toPath: two.appendingPathComponent("clip.mp4").path)
        let corrupt = try Fixtures.truncatedCopy(of: "vtest-small.mp4", bytes: 3000, in: folder)
        let inputs = [one.appendingPathComponent("clip.mp4").path, Fixtures.sample("Megamind.avi"), two.appendingPathComponent("clip.mp4").path,
                      corrupt, folder.appendingPathComponent("missing.mp4").path]
        let manifest = folder.appendingPathComponent("manifest.txt").path
        try (inputs.joined(separator: "\n") + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent("out").path
        let logs = folder.appendingPathComponent("logs").path
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        let environment: [String: String?] = ["DOCKTRACK": Fixtures.tool, "REFRAME_ARGS": "--aspect 9:16 --end 30 --no-face-cues",
                                              "JOB_COMPLETION_INDEX": nil, "SLURM_ARRAY_TASK_ID": nil]
        func submit(_ extra: [String] = [], oneAtATime: Bool = false, to outputs: String) throws -> ToolRun {
            try Self.slurm("sbatch", ["--parsable", "--array=0-\(inputs.count - 1)" + (oneAtATime ? "%1" : "")] + extra
                           + ["--cpus-per-task=1", "--mem=1G", "--output=\(logs)/%A_%a.out", "--export=ALL", Self.batch, manifest, outputs],
                           cluster: clusterFolder, environment: environment)
        }

        /// The job `submitted` started, once it has left the queue (squeue asked every 0.2 s:
        /// `sbatch --wait` looks every 10 s, and three waits were 30 of the test's 37 s), with
        /// its tasks' states as slurmctld keeps them.
        func finished(_ submitted: ToolRun) throws -> [String] {
            let job = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(submitted.status == 0 && !job.isEmpty, "sbatch: \(submitted.stderr)")
            try waitWhile(atMost: .seconds(300), every: .milliseconds(200)) {
                !(try Self.slurm("squeue", ["-h", "-j", job], cluster: clusterFolder).stdout.isEmpty)
            }
            let shown = try Self.slurm("scontrol", ["-o", "show", "job", job], cluster: clusterFolder).stdout
            return shown.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("JobState=") }.map { String($0.dropFirst("JobState=".count)) }
            }
        }

        // The array, waited for: the good files reframed, the bad ones failed with their error.
        let states = try finished(try submit(to: out))
        #expect(states.sorted() == ["COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "FAILED"],
                "slurm counts the tasks of the files that could not be reframed as failed: \(states)")
        var results = try Self.results(in: out)
        #expect(results.count == inputs.count, "one result per input: \(results.keys.sorted())")
        let ok = results.filter { $0.value["status"] as? String == "ok" }, failed = results.filter { $0.value["status"] as? String == "failed" }
        #expect(ok.count == 3 && failed.count == 2, "\(results)")
        #expect(Set(ok.compactMap { $0.value["input"] as? String }) == Set(inputs.prefix(3)), "\(ok)")
        for (_, result) in ok { #expect(result["frames"] as? Int == 30, "\(result)") }
        #expect(Set(failed.compactMap { $0.value["input"] as? String }) == Set(inputs.suffix(2)), "\(failed)")
        for (_, result) in failed { #expect(!(result["error"] as? String ?? "").isEmpty, "a failure says why: \(result)") }
        // The two clip.mp4 are two outputs, each its own size; nothing else was written.
        let videos = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".reframed.mp4") }.sorted()
        #expect(videos.count == 3 && videos.filter { $0.hasPrefix("clip-") }.count == 2, "\(videos)")
        let sizes = try videos.filter { $0.hasPrefix("clip-") }.map { try MediaFile.open("\(out)/\($0)").info.size }
        #expect(Set(sizes.map { "\($0)" }).count == 2, "the two clip.mp4 are reframed apart: \(sizes)")
        let written = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(written.count == 3 + inputs.count, "\(written)")
        for input in inputs where FileManager.default.fileExists(atPath: input) {
            let beside = (try? FileManager.default.contentsOfDirectory(atPath: (input as NSString).deletingLastPathComponent)) ?? []
            #expect(!beside.contains { $0.contains("reframed") }, "nothing written beside \(input)")
        }

        // The report: counts, time and speed, the failures with their errors; a page with a strip
        // of the source and of the reframed video for each file done.
        let report = try ToolRun.docktrack(["report", out])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.lines.first == "5 files: 3 reframed, 2 failed", "\(report.stdout)")
        #expect(report.lines.contains { $0.contains("s of video reframed in") && $0.contains("x real time") }, "\(report.stdout)")
        #expect(report.lines.filter { $0.hasPrefix("failed: ") }.count == 2 && report.stdout.contains(corrupt) && report.stdout.contains("missing.mp4"),
                "\(report.stdout)")
        let page = try String(contentsOfFile: "\(out)/report.html", encoding: .utf8)
        let pictures = page.components(separatedBy: "<img src=\"report/").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(pictures.count == 3 * 2 * 6, "six pictures of each source and each reframed video: \(pictures.count)")
        for picture in pictures { #expect(FileManager.default.fileExists(atPath: "\(out)/report/\(picture)"), "\(picture)") }
        let reframedPicture = try Image(contentsOf: "\(out)/report/\(try #require(pictures.first { $0.contains("-reframed-") }))")
        #expect(reframedPicture.size.height == 120 && reframedPicture.size.width < reframedPicture.size.height, "9:16: \(reframedPicture.size)")
        try FileManager.default.removeItem(atPath: "\(out)/report.html")
        try FileManager.default.removeItem(atPath: "\(out)/report")

        // The same array again: the files done are not done again (their outputs untouched).
        let stamps = try videos.map { try FileManager.default.attributesOfItem(atPath: "\(out)/\($0)")[.modificationDate] as? Date }
        #expect(try finished(try submit(to: out)).count == inputs.count)
        #expect(try videos.map { try FileManager.default.attributesOfItem(atPath: "\(out)/\($0)")[.modificationDate] as? Date } == stamps)
        let doneBefore = try FileManager.default.contentsOfDirectory(atPath: logs).filter { name in
            ((try? String(contentsOfFile: "\(logs)/\(name)", encoding: .utf8)) ?? "").contains("done before")
        }
        #expect(doneBefore.count == 3, "three tasks said done before: \(doneBefore)")

        // One at a time into a new folder, cancelled once the first file is done: submitted again,
        // the rest is done and the first is not done twice.
        let resumed = folder.appendingPathComponent("resumed").path
        let cancelled = try submit(oneAtATime: true, to: resumed)
        let job = cancelled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(cancelled.status == 0 && !job.isEmpty, "\(cancelled.stderr)")
        let deadline = Date().addingTimeInterval(300)
        waitWhile(until: deadline, every: .milliseconds(200)) { (try? Self.results(in: resumed).count) ?? 0 < 1 }
        #expect(try Self.slurm("scancel", [job], cluster: clusterFolder).status == 0)
        try waitWhile(until: deadline, every: .milliseconds(200)) { !(try Self.slurm("squeue", ["-h", "-j", job], cluster: clusterFolder).stdout.isEmpty) }
        results = try Self.results(in: resumed)
        #expect(results.count < inputs.count, "cancelled part-way: \(results.keys.sorted())")
        // The files done well before the cancel (a file cut off by it may say failed, and is done again).
        let doneWell = results.filter { $0.value["status"] as? String == "ok" }.keys.sorted()
        #expect(!doneWell.isEmpty, "a file was done before the cancel: \(results)")
        func modified(_ names: [String]) throws -> [Date?] {
            try names.map { try FileManager.default.attributesOfItem(atPath: "\(resumed)/\($0)")[.modificationDate] as? Date }
        }
        let firstDone = try modified(doneWell)
        #expect(try finished(try submit(to: resumed)).count == inputs.count)
        let finished = try Self.results(in: resumed)
        #expect(finished.count == inputs.count && finished.values.filter { $0["status"] as? String == "ok" }.count == 3, "\(finished)")
        #expect(try modified(doneWell) == firstDone, "the files done before the cancel were not done again: \(doneWell)")
    }
}
