import DockTrack
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Network video in, against a camera nobody in this project wrote: ipycam (PyPI) streams
/// samples/vtest.avi as HTTP MJPEG inside a network namespace with only loopback up
/// (tools/ip-camera.sh installs it, starts it, stops it and removes the namespace), and the built
/// `docktrack` runs in the same namespace.
@Suite(.serialized) struct NetworkCameraTests {
    static let script = Fixtures.root.appendingPathComponent("tools/ip-camera.sh").path
    static let stream = "http://127.0.0.1:8080/stream.mjpeg"

    static func camera(_ arguments: [String]) throws -> ToolRun {
        try ToolRun.run("/bin/bash", [script] + arguments)
    }

    static func records(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func urlsAreStreamsAndPathsAreFiles() {
        for url in ["rtsp://cam/stream1", "http://127.0.0.1:8080/stream.mjpeg", "HTTPS://x/y", "rtsps://u:p@h:322/s", "udp://@:1234"] {
            #expect(NetworkStream.isURL(url), "\(url)")
        }
        for path in ["samples/vtest.avi", "/dev/video0", "file:///tmp/a.mp4", "://nothing", "weird name://x", "a.mp4?x=http://y"] {
            #expect(!NetworkStream.isURL(path), "\(path)")
        }
    }

    @Test func docktrackTracksTheStreamOfAnIPCameraAndWaitsOutItsLoss() throws {
        let folder = try Fixtures.temporaryFolder()
        let session = folder.appendingPathComponent("ipcam").path
        let started = try Self.camera(["start", session, Fixtures.sample("vtest.avi")])
        defer { _ = try? Self.camera(["stop", session]) }
        try #require(started.status == 0, "ip camera: \(started.stderr)")

        // Live: frames of the stream's size as they arrive, people in them, newer frames win.
        let states = folder.appendingPathComponent("states.jsonl").path
        let track = try Self.camera(["run", session, Fixtures.tool, "track", Self.stream, "--duration", "6", "-d", "dnn-face,hog-body-fast",
                                     "--states", states, "--summary"])
        #expect(track.status == 0, "\(track.stderr)")
        #expect(track.stderr.contains("\(Self.stream): 768x576"), "\(track.stderr)")
        let records = Self.records(states)
        #expect(records.count >= 20, "\(records.count) frames in 6 s\n\(track.stderr)")
        let times = records.map { $0["time"] as! Double }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "arrival times increase")
        #expect((times.last ?? 0) > 4, "frames over the whole run: \(times.last ?? 0) s")
        let withPeople = records.filter { ($0["subjects"] as! [[String: Any]]).contains { $0["kind"] as? String == "person" } }
        #expect(Double(withPeople.count) >= 0.6 * Double(records.count), "people in \(withPeople.count) of \(records.count) frames")

        // Nothing listening, and a server that accepts and never answers: a one-line error, soon.
        let closed = try Self.camera(["run", session, Fixtures.tool, "track", "http://127.0.0.1:9/stream.mjpeg", "--duration", "3"])
        #expect(closed.status != 0)
        #expect(closed.stderr.contains("http://127.0.0.1:9/stream.mjpeg: no stream FFmpeg can decode answered"), "\(closed.stderr)")
        let quiet = open("/dev/null", O_WRONLY)
        defer { close(quiet) }
        let silentServer = try ToolRun.spawn("/bin/bash", [Self.script, "run", session, "python3", "-c", """
            import socket, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(('127.0.0.1', 9099)); s.listen(4); held = []
            end = time.time() + 15
            while time.time() < end:
                s.settimeout(0.5)
                try: held.append(s.accept())
                except OSError: pass
            """], stdout: quiet, stderr: quiet).get()
        defer { kill(silentServer, SIGKILL); _ = ToolRun.wait(for: silentServer) }
        Thread.sleep(forTimeInterval: 0.5)
        let asked = Date()
        let silent = try Self.camera(["run", session, Fixtures.tool, "track", "http://127.0.0.1:9099/stream.mjpeg", "--duration", "3"])
        let waited = Date().timeIntervalSince(asked)
        #expect(silent.status != 0 && silent.stderr.contains("no stream FFmpeg can decode answered"), "\(silent.stderr)")
        #expect(waited < 12, "gave up after \(waited) s")

        // The camera goes away mid-run and comes back: with --reconnect the run waits and resumes
        // within 2 s of its return.
        let liveStates = folder.appendingPathComponent("reconnect.jsonl").path
        let errorsPath = folder.appendingPathComponent("reconnect.err").path
        let errorsFile = open(errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644), devNull = open("/dev/null", O_WRONLY)
        let pid = try ToolRun.spawn("/bin/bash", [Self.script, "run", session, Fixtures.tool, "track", Self.stream, "--reconnect",
                                                  "--duration", "16", "-d", "dnn-face,hog-body-fast", "--detect-async", "--states", liveStates,
                                                  "--summary"], stdout: devNull, stderr: errorsFile).get()
        close(errorsFile)
        close(devNull)
        let deadline = Date().addingTimeInterval(8)
        while Self.records(liveStates).count < 10 && Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
        let beforeLoss = Self.records(liveStates).count
        #expect(try Self.camera(["kill", session]).status == 0)
        Thread.sleep(forTimeInterval: 3)
        let revived = try Self.camera(["revive", session, Fixtures.sample("vtest.avi")])
        #expect(revived.status == 0, "\(revived.stderr)")
        let away = try #require(Double(revived.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(revived.stdout)")
        let status = ToolRun.wait(for: pid)
        let stderr = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(stderr)")
        #expect(beforeLoss >= 10, "frames before the loss: \(beforeLoss)\n\(stderr)")
        #expect(stderr.contains("waiting for it to come back") && stderr.contains("back after"), "\(stderr)")
        let liveTimes = Self.records(liveStates).map { $0["time"] as! Double }
        let gap = zip(liveTimes, liveTimes.dropFirst()).map { $1 - $0 }.max() ?? 0
        print(String(format: "ip camera away %.2f s; the longest gap between tracked frames %.2f s", away, gap)
              + "; " + stderr.split(separator: "\n").filter { $0.contains("back after") }.joined())
        #expect(gap < away + 2, "tracking resumed \(gap - away) s after the camera's return\n\(stderr)")
        #expect(liveTimes.count > beforeLoss + 20 && (liveTimes.last ?? 0) - (liveTimes.first ?? 0) > 12, "tracking went on after the return\n\(stderr)")
    }
}
