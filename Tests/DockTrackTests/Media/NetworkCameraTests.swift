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
@Suite(.serialized, .serializedOnTestThreads) struct NetworkCameraTests {
    static let script = Fixtures.root.appendingPathComponent("tools/ip-camera.sh").path
    static let stream = "http://127.0.0.1:8080/stream.mjpeg"

    /// The camera script; ipycam streams at 15 frames per second here (its default 30 cost
    /// the test run a quarter of its processor time, for nothing these tests look at).
    static func camera(_ arguments: [String]) throws -> ToolRun {
        try ToolRun.run("/bin/bash", [script] + arguments, environment: ["IPCAM_FPS": "15"])
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

    @Test func passwordsInURLsAreNotShown() {
        #expect(NetworkStream.redacted("http://admin:s3cret@127.0.0.1:8080/stream.mjpeg") == "http://admin:***@127.0.0.1:8080/stream.mjpeg")
        #expect(NetworkStream.redacted("rtsp://cam/a@b") == "rtsp://cam/a@b")
        #expect(NetworkStream.redacted("rtsp://user@cam/s") == "rtsp://user@cam/s")
    }

    /// ONVIF's pieces on their own: SHA-1 (FIPS 180-4 vectors), the WS-Security password digest
    /// (Base64(SHA-1(nonce + created + password)), checked against Python's hashlib), and the
    /// reply parsing.
    @Test func soapPiecesAreRight() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(ONVIFDock.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(ONVIFDock.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(ONVIFDock.sha1(Array(repeating: UInt8(ascii: "a"), count: 1000))) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
        let token = ONVIFDock.usernameToken(user: "admin", password: "s3cret", nonce: Array(0..<16),
                                            created: ISO8601DateFormatter().date(from: "2026-11-23T12:00:00Z")!)
        #expect(token.contains("PasswordDigest\">36g5WA9ulHrfeSlutsGpZKbV7PE=</wsse:Password>"), "\(token)")
        #expect(token.contains("<wsu:Created>2026-11-23T12:00:00Z</wsu:Created>") && !token.contains("s3cret"))
        let status = #"<s:Body><tptz:GetStatusResponse><tptz:PTZStatus><tt:Position><tt:PanTilt x="-0.25" y="0.5" space="x"/><tt:Zoom x="0.5"/></tt:Position></tptz:PTZStatus></tptz:GetStatusResponse></s:Body>"#
        let position = ONVIFDock.element("Position", in: status)
        #expect(position.flatMap { ONVIFDock.attribute("x", ofFirst: "PanTilt", in: $0) } == "-0.25")
        #expect(position.flatMap { ONVIFDock.attribute("y", ofFirst: "PanTilt", in: $0) } == "0.5")
        #expect(ONVIFDock.attribute("token", ofFirst: "Profiles", in: #"<trt:Profiles fixed="true" token="Profile_Main"><tt:Name>m</tt:Name>"#) == "Profile_Main")
        #expect(ONVIFDock.element("Text", in: #"<s:Fault><s:Reason><s:Text xml:lang="en">Sender not authorized</s:Text></s:Reason></s:Fault>"#) == "Sender not authorized")
        #expect(ONVIFDock.element("Missing", in: status) == nil)
        // GetConfigurationOptions (the form of ONVIF's PTZ specification): a camera's own ranges.
        let options = #"<tptz:PTZConfigurationOptions><tt:Spaces><tt:AbsolutePanTiltPositionSpace><tt:URI>http://www.onvif.org/ver10/tptz/PanTiltSpaces/PositionGenericSpace</tt:URI><tt:XRange><tt:Min>-180</tt:Min><tt:Max>180</tt:Max></tt:XRange><tt:YRange><tt:Min>-30</tt:Min><tt:Max>90</tt:Max></tt:YRange></tt:AbsolutePanTiltPositionSpace><tt:AbsoluteZoomPositionSpace><tt:XRange><tt:Min>0</tt:Min><tt:Max>1</tt:Max></tt:XRange></tt:AbsoluteZoomPositionSpace></tt:Spaces></tptz:PTZConfigurationOptions>"#
        let spaces = ONVIFDock.positionSpaces(in: options)
        #expect(spaces?.pan == -180...180 && spaces?.tilt == -30...90, "\(String(describing: spaces))")
        #expect(ONVIFDock.positionSpaces(in: options.replacingOccurrences(of: "<tt:Max>180</tt:Max>", with: "<tt:Max>-180</tt:Max>")) == nil, "an empty range is no range")
        #expect(ONVIFDock.positionSpaces(in: options.replacingOccurrences(of: "-30", with: "nan")) == nil)
        #expect(ONVIFDock.positionSpaces(in: options.replacingOccurrences(of: "<tt:Min>-180</tt:Min><tt:Max>180</tt:Max>", with: "<tt:Min>-1e308</tt:Min><tt:Max>1e308</tt:Max>")) == nil, "a span past the largest number")
        #expect(ONVIFDock.positionSpaces(in: status) == nil)
        #expect(ONVIFDock.onto(-30...90, -1) == -30 && ONVIFDock.onto(-30...90, 1) == 90 && ONVIFDock.generic(-30...90, 30) == 0)
        // GetPresets: tokens and names unescaped, a preset without a position kept without one.
        let presets = ONVIFDock.presets(in: #"<tptz:GetPresetsResponse><tptz:Preset token="p&amp;1"><tt:Name>door &lt;1&gt;</tt:Name><tt:PTZPosition><tt:PanTilt x="-0.2" y="0.1"/><tt:Zoom x="0.5"/></tt:PTZPosition></tptz:Preset><tptz:Preset token="2"><tt:Name>desk</tt:Name></tptz:Preset></tptz:GetPresetsResponse>"#)
        #expect(presets.count == 2)
        #expect(presets.first?.token == "p&1" && presets.first?.name == "door <1>" && presets.first?.pan == -0.2 && presets.first?.tilt == 0.1 && presets.first?.zoom == 0.5)
        #expect(presets.last?.token == "2" && presets.last?.name == "desk" && presets.last?.pan == nil)
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
            end = time.time() + 60
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
        // A run that waited on the silent server would wait its 60 s.
        #expect(waited < 40, "gave up after \(waited) s")

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
        waitWhile(until: deadline, every: .milliseconds(200)) { Self.records(liveStates).count < 10 }
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

    /// A scene for the PTZ camera: Grace Hopper's portrait 200 px tall on a black 1280x720
    /// picture, its centre at (490, 330), 1 s at 25 fps.
    static func offCentreScene(in folder: URL) throws -> String {
        let portrait = try Image(contentsOf: Fixtures.sample("grace_hopper_512x512.jpg"))
        let scale = 200.0 / 512
        let region = PixelRect(x: 256 - 490 / scale, y: 256 - 330 / scale, width: 1280 / scale, height: 720 / scale)
        let picture = try portrait.cropped(to: region, size: ImageSize(width: 1280, height: 720))
        return try stillVideo(of: picture, named: "scene.mp4", in: folder)
    }

    /// `picture` as a video file in `folder`, 1 s at 25 fps: ipycam loops its source, and a still
    /// picture loops without a seam (40 s, 1000 frames, cost each test seconds of both cores to encode).
    static func stillVideo(of picture: Image, named name: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent(name).path
        let video = try EncodedVideoFile(path: path, size: picture.size, framesPerSecond: 25)
        for _ in 0..<25 { try video.write(picture) }
        try video.close()
        return path
    }

    /// The face in the camera's snapshot now: its centre in unit coordinates (lower-left origin)
    /// and its height (a share of the picture's).
    static func faceInSnapshot(_ session: String, folder: URL, name: String) throws -> (x: Double, y: Double, height: Double)? {
        let path = folder.appendingPathComponent(name).path
        let fetched = try camera(["run", session, "curl", "-s", "--max-time", "5", "-o", path, "http://127.0.0.1:8080/snapshot.jpg"])
        guard fetched.status == 0 else { return nil }
        let found = try ToolRun.docktrack(["detect", path, "-d", "dnn-face"])
        guard let line = found.lines.first, let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let face = (record["observations"] as? [[String: Any]])?.first, let rect = face["rect"] as? [String: Double] else { return nil }
        return (rect["x"]! + rect["width"]! / 2, rect["y"]! + rect["height"]! / 2, rect["height"]!)
    }

    /// ipycam's own account of its pose (its web API, not ONVIF).
    /// Zooms the camera of `session` to `zoom` (expecting it to say it did), lets a picture at
    /// that zoom through, and finds the face in its snapshot.
    static func faceZoomed(_ session: String, to zoom: Double, folder: URL) throws -> (x: Double, y: Double, height: Double)? {
        #expect(try pose(session, action: #"{"action":"zoom_to","value":\#(zoom)}"#)["zoom"] as? Double == zoom)
        Thread.sleep(forTimeInterval: 0.5)
        return try faceInSnapshot(session, folder: folder, name: "before.jpg")
    }

    static func pose(_ session: String, action: String? = nil) throws -> [String: Any] {
        let arguments = action.map { ["-X", "POST", "-d", $0] } ?? []
        let reply = try camera(["run", session, "curl", "-s", "--max-time", "5"] + arguments + ["http://127.0.0.1:8080/api/ptz"])
        return (try? JSONSerialization.jsonObject(with: Data(reply.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// `docktrack track ARGUMENTS` beside the camera of `session` until its pose has met
    /// `settled` without moving for 2 s (read every half second), or `atMost` seconds went by; then stopped
    /// with Ctrl-C, as a person would. Not a fixed --duration: on a busy machine the networks
    /// load and the loop turns the camera later (a loaded suite's 20 s runs ended with the
    /// camera a third of the way there).
    static func trackUntilSettled(_ session: String, _ arguments: [String], atMost: Double = 90,
                                  settled: ([String: Any]) -> Bool) throws -> (status: Int32, stderr: String) {
        let errorsPath = try Fixtures.temporaryFolder().appendingPathComponent("track.err").path
        let errorsFile = open(errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644), devNull = open("/dev/null", O_WRONLY)
        let pid = try ToolRun.spawn("/bin/bash", [script, "run", session, Fixtures.tool, "track", stream] + arguments + ["--duration", "\(Int(atMost) + 30)"],
                                    stdout: devNull, stderr: errorsFile).get()
        close(errorsFile)
        close(devNull)
        // Held: as asked, and not moved since (AbsoluteMoves come in steps, and "moving" is false
        // between them: a loaded run was stopped between two, short of framing the person).
        var held: (since: Date, pose: [Double])?
        waitWhile(atMost: .seconds(atMost), every: .milliseconds(500)) {
            let now = (try? pose(session)) ?? [:]
            let axes = ["pan", "tilt", "zoom"].map { now[$0] as? Double ?? .nan }
            guard settled(now), let before = held, zip(before.pose, axes).allSatisfy({ abs($0 - $1) < 0.002 }) else {
                held = settled(now) ? (Date(), axes) : nil
                return true
            }
            return Date().timeIntervalSince(before.since) < 2
        }
        kill(pid, SIGINT)
        let status = ToolRun.wait(for: pid)
        return (status, (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? "")
    }

    /// The closed loop through ONVIF: ipycam's PTZ is digital (a crop of its source that follows
    /// the moves), zoomed to 0.5 at the start with the person off centre; `track --dock onvif:`
    /// moves it by ContinuousMove (velocity) or AbsoluteMove (orientation), reading the pose back
    /// by GetStatus, until its own picture shows the person in the middle.
    @Test(arguments: ["velocity", "orientation"])
    func docktrackMovesAnONVIFCameraOntoThePerson(commands: String) throws {
        let folder = try Fixtures.temporaryFolder()
        let session = folder.appendingPathComponent("ipcam").path
        let started = try Self.camera(["start", session, try Self.offCentreScene(in: folder)])
        defer { _ = try? Self.camera(["stop", session]) }
        try #require(started.status == 0, "ip camera: \(started.stderr)")
        let before = try #require(try Self.faceZoomed(session, to: 0.5, folder: folder), "the face is in the zoomed view")
        #expect(abs(before.x - 0.5) > 0.2, "the person starts off centre: \(before)")

        // The digital PTZ's ranges at zoom 0.5 (2.5 times): pan 1 moves the view by 0.75 of its
        // width (52.5 deg of a 70 deg view), tilt 1 by 0.75 of its height (29.5 deg); 1 unit/s.
        let track = try Self.trackUntilSettled(session, ["--dock", "onvif:127.0.0.1:8080",
                                     "--commands", commands, "--onvif-pan-range", "52.5", "--onvif-tilt-range", "29.5", "--onvif-speed", "1",
                                     "-d", "dnn-face", "--detect-async", "--summary",
                                     // The loop, not the search: on a loaded machine the first detection can come after the
                                     // search's first second, and a sweep then took the view away from the person.
                                     "--no-search"]) { pose in
            ((pose["pan"] as? Double).map { $0 < -0.25 && $0 > -0.55 } ?? false) && (pose["moving"] as? Bool) == false
        }
        #expect(track.status == 130, "stopped by Ctrl-C: \(track.stderr)")
        let pose = try Self.pose(session)
        let pan = try #require(pose["pan"] as? Double), moving = pose["moving"] as? Bool
        #expect(pan < -0.25 && pan > -0.55, "the camera turned toward the person (left): pan \(pan), \(pose); track said: \(track.stderr.suffix(3000))")
        #expect(moving == false, "the camera was left still: \(pose)")
        let after = try #require(try Self.faceInSnapshot(session, folder: folder, name: "after.jpg"), "the face is in view at the end")
        print(String(format: "ONVIF %@: face centre x %.3f -> %.3f, y %.3f -> %.3f; camera pan %.3f", commands, before.x, after.x, before.y, after.y, pan))
        print("ONVIF \(commands): " + (track.stderr.split(separator: "\n").last { $0.contains("before they arrive") }.map(String.init) ?? "no picture delay measured"))
        #expect(abs(after.x - 0.5) < 0.1 && abs(after.y - 0.5) < 0.2, "the person is framed: \(after)")
    }

    /// Zoom as part of framing: ipycam starts at its widest, where its digital PTZ cannot turn
    /// at all, with the person off centre; `track --onvif-zoom 4 --onvif-digital-ptz` zooms in
    /// toward head and shoulders, which lets it turn, and turns onto the person, by velocity and
    /// by absolute moves. (At pan, tilt and zoom 0 ipycam streams its 1280x720 source as it is,
    /// otherwise its 1920x1080 output: the stream changes size as soon as the camera zooms.)
    @Test(arguments: ["velocity", "orientation"])
    func docktrackZoomsAnONVIFCameraInToFrameThePerson(commands: String) throws {
        let folder = try Fixtures.temporaryFolder()
        let session = folder.appendingPathComponent("ipcam").path
        let started = try Self.camera(["start", session, try Self.offCentreScene(in: folder)])
        defer { _ = try? Self.camera(["stop", session]) }
        try #require(started.status == 0, "ip camera: \(started.stderr)")
        let before = try #require(try Self.faceZoomed(session, to: 0, folder: folder), "the face is in the wide view")
        #expect(abs(before.x - 0.5) > 0.08, "the person starts off centre: \(before)")
        let track = try Self.trackUntilSettled(session, ["--dock", "onvif:127.0.0.1:8080", "--commands", commands,
                                     "--onvif-zoom", "4", "--onvif-digital-ptz", "--fov", "60", "--onvif-speed", "1",
                                     "-d", "dnn-face", "--detect-async", "--summary", "--no-search"]) { pose in
            ((pose["zoom"] as? Double).map { $0 > 0.15 && $0 < 0.6 } ?? false) && ((pose["pan"] as? Double).map { $0 < -0.2 } ?? false)
                && (pose["moving"] as? Bool) == false
        }
        #expect(track.status == 130, "stopped by Ctrl-C: \(track.stderr)")
        let pose = try Self.pose(session)
        let zoom = try #require(pose["zoom"] as? Double), pan = try #require(pose["pan"] as? Double)
        let after = try #require(try Self.faceInSnapshot(session, folder: folder, name: "after.jpg"), "the face is in view at the end: \(pose)")
        print(String(format: "ONVIF zoom, %@: zoom 0 -> %.3f, pan %.3f; face x %.3f -> %.3f, height %.3f -> %.3f",
                     commands, zoom, pan, before.x, after.x, before.height, after.height))
        #expect(zoom > 0.15 && zoom < 0.6, "zoomed in, not to the end: \(pose)")
        #expect(pan < -0.2, "turned toward the person (left): \(pose)")
        #expect(after.height > 1.5 * before.height, "the face is bigger: \(before.height) -> \(after.height)")
        #expect(abs(after.x - 0.5) < 0.1 && abs(after.y - 0.5) < 0.2, "the person is framed: \(after)")
    }

    /// A Motion JPEG stream whose pictures change size midway (ipycam: its 1280x720 source at
    /// zoom 0, its 1920x1080 output zoomed) is read at each picture's size: the face grows with
    /// the zoom and is back as it was after (OpenCV's own reading kept the first size and
    /// garbled the rest: the face stayed where it was in a picture tiled at the old stride).
    @Test func anMJPEGStreamThatChangesSizeIsReadAtEachSize() throws {
        let folder = try Fixtures.temporaryFolder()
        let session = folder.appendingPathComponent("ipcam").path
        let started = try Self.camera(["start", session, try Self.offCentreScene(in: folder)])
        defer { _ = try? Self.camera(["stop", session]) }
        try #require(started.status == 0, "ip camera: \(started.stderr)")
        _ = try Self.pose(session, action: #"{"action":"zoom_to","value":0}"#)
        // detect reads the stream while the camera zooms in and out; each zoom waits until detect
        // has read enough pictures at the size before (not a fixed time: ipycam makes its
        // 1920x1080 pictures at about 9 a second here, and fewer on a busy machine).
        let output = folder.appendingPathComponent("detect.jsonl").path, errorsPath = folder.appendingPathComponent("detect.err").path
        let outputFile = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644), errorsFile = open(errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let pid = try ToolRun.spawn("/bin/bash", [Self.script, "run", session, Fixtures.tool, "detect", Self.stream, "-d", "dnn-face"],
                                    environment: ["IPCAM_FPS": "15"], stdout: outputFile, stderr: errorsFile).get()
        close(outputFile)
        close(errorsFile)
        var stopped = false
        defer { if !stopped { kill(pid, SIGKILL); _ = ToolRun.wait(for: pid) } }
        // Each picture's width and its first face's height (pictures with a face), as written so far.
        func faces() -> [(width: Int, height: Double)] {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let width = record["width"] as? Int,
                      let face = (record["observations"] as? [[String: Any]])?.first, let rect = face["rect"] as? [String: Double] else { return nil }
                return (width, rect["height"]!)
            }
        }
        func count(_ width: Int) -> Int { faces().filter { $0.width == width }.count }
        waitWhile(atMost: .seconds(120), every: .milliseconds(200)) { count(1280) <= 50 }
        _ = try Self.pose(session, action: #"{"action":"zoom_to","value":0.5}"#)
        waitWhile(atMost: .seconds(120), every: .milliseconds(200)) { count(1920) <= 30 }
        let wideBefore = count(1280)
        _ = try Self.pose(session, action: #"{"action":"zoom_to","value":0}"#)
        waitWhile(atMost: .seconds(120), every: .milliseconds(200)) { count(1280) < wideBefore + 10 }
        kill(pid, SIGTERM)
        _ = ToolRun.wait(for: pid)
        stopped = true
        let faces = faces()
        let errors = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        #expect(!faces.isEmpty, "detect read nothing: \(errors)")
        let wide = faces.filter { $0.width == 1280 }, zoomed = faces.filter { $0.width == 1920 }
        #expect(wide.count > 50 && zoomed.count > 30, "pictures of each size: \(wide.count) wide, \(zoomed.count) zoomed")
        let wideFace = wide.map(\.height).max() ?? 0, zoomedFace = zoomed.map(\.height).min() ?? 0
        #expect(zoomedFace > 2 * wideFace, "zoomed 2.5 times, the face \(wideFace) -> \(zoomedFace)")
        #expect(faces.last?.width == 1280, "back to the source's size at zoom 0")
    }

    /// A scene with nobody in it: a gray 640x360 picture, 1 s at 25 fps.
    static func emptyScene(in folder: URL) throws -> String {
        let picture = try Frame.blank(index: 0, time: 0, size: ImageSize(width: 640, height: 360)).image
        return try stillVideo(of: picture, named: "empty.mp4", in: folder)
    }

    /// Presets by hand (`docktrack onvif`: a turn by RelativeMove saved with SetPreset, home,
    /// GotoPreset back), then `track --onvif-home-preset`: with nobody in view the camera goes
    /// back to the preset. ipycam's own API says where it points (pan 1 = 170 deg, tilt 1 = 90 deg
    /// with the default ranges).
    @Test func presetsAreSavedGoneToAndReturnedToWhenNobodyIsLeft() throws {
        let folder = try Fixtures.temporaryFolder()
        let session = folder.appendingPathComponent("ipcam").path
        let started = try Self.camera(["start", session, try Self.emptyScene(in: folder)])
        defer { _ = try? Self.camera(["stop", session]) }
        try #require(started.status == 0, "ip camera: \(started.stderr)")
        #expect(try Self.pose(session, action: #"{"action":"zoom_to","value":0.5}"#)["zoom"] as? Double == 0.5)
        func onvif(_ arguments: [String]) throws -> (status: Int32, records: [[String: Any]], stderr: String) {
            let run = try Self.camera(["run", session, Fixtures.tool, "onvif", "127.0.0.1:8080"] + arguments)
            return (run.status, run.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }, run.stderr)
        }
        func status(_ records: [[String: Any]]) -> (pan: Double, tilt: Double)? {
            guard let status = records.last?["status"] as? [String: Double], let pan = status["pan"], let tilt = status["tilt"] else { return nil }
            return (pan, tilt)
        }
        let saved = try onvif(["--turn=-30,10", "--save-preset", "door", "--status"])
        #expect(saved.status == 0, "\(saved.stderr)")
        let door = try #require(status(saved.records), "\(saved.records)")
        #expect(abs(door.pan + 30) < 0.5 && abs(door.tilt - 10) < 0.5, "turned by -30, 10 degrees: \(door)")
        let camera = try Self.pose(session)
        #expect(abs((camera["pan"] as? Double ?? 0) + 30.0 / 170) < 0.005 && abs((camera["tilt"] as? Double ?? 0) - 10.0 / 90) < 0.005, "\(camera)")
        let listed = try onvif(["--presets"])
        let presets = try #require(listed.records.first?["presets"] as? [[String: Any]], "\(listed.records)")
        #expect(presets.contains { $0["name"] as? String == "door" && abs(($0["pan"] as? Double ?? 0) + 30) < 0.5 }, "\(presets)")

        let home = try onvif(["--home", "--status"])
        let atHome = try #require(status(home.records), "\(home.records) \(home.stderr)")
        #expect(abs(atHome.pan) < 0.5 && abs(atHome.tilt) < 0.5, "home: \(atHome)")
        let back = try onvif(["--go-to-preset", "door", "--status"])
        let atDoor = try #require(status(back.records), "\(back.records) \(back.stderr)")
        #expect(abs(atDoor.pan + 30) < 0.5 && abs(atDoor.tilt - 10) < 0.5, "back at the preset: \(atDoor)")
        let unknown = try onvif(["--go-to-preset", "nowhere"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no preset nowhere") && unknown.stderr.contains("door"), "\(unknown.stderr)")

        // Home, then tracking with nobody in view: after --home-after the camera heads for the preset.
        _ = try onvif(["--home"])
        _ = try Self.pose(session, action: #"{"action":"zoom_to","value":0.5}"#)
        let track = try Self.camera(["run", session, Fixtures.tool, "track", Self.stream, "--dock", "onvif:127.0.0.1:8080",
                                     "--onvif-home-preset", "door", "--no-search", "--home-after", "1", "--duration", "8",
                                     "-d", "dnn-face", "--summary"])
        #expect(track.status == 0, "\(track.stderr)")
        let end = try Self.pose(session)
        let pan = try #require(end["pan"] as? Double), tilt = try #require(end["tilt"] as? Double)
        print(String(format: "ONVIF home preset: the camera ended at pan %.4f, tilt %.4f (the preset: %.4f, %.4f)", pan, tilt, -30.0 / 170, 10.0 / 90))
        #expect(abs(pan + 30.0 / 170) < 0.03 && abs(tilt - 10.0 / 90) < 0.03, "the camera went back to the preset: \(end)")
        let noPreset = try Self.camera(["run", session, Fixtures.tool, "track", Self.stream, "--dock", "onvif:127.0.0.1:8080",
                                        "--onvif-home-preset", "attic", "--duration", "2", "-d", "dnn-face"])
        #expect(noPreset.status == 1 && noPreset.stderr.contains("no preset attic"), "\(noPreset.stderr)")
    }

    /// A camera with credentials: its stream takes them in the URL, its ONVIF service as a
    /// WS-Security digest (ipycam's own verifier); a wrong password is refused, in one line, and
    /// no password is shown.
    @Test func anONVIFCameraWithCredentialsTakesOnlyTheRightPassword() throws {
        let folder = try Fixtures.temporaryFolder()
        let session = folder.appendingPathComponent("ipcam")
        try FileManager.default.createDirectory(at: session, withIntermediateDirectories: true)
        try Data(#"{"username": "admin", "password": "s3cret"}"#.utf8).write(to: session.appendingPathComponent("camera_config.json"))
        let started = try Self.camera(["start", session.path, Fixtures.sample("vtest.avi")])
        defer { _ = try? Self.camera(["stop", session.path]) }
        try #require(started.status == 0, "ip camera: \(started.stderr)")
        let passwordFile = folder.appendingPathComponent("password").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        let url = "http://admin:s3cret@127.0.0.1:8080/stream.mjpeg"
        func track(_ credentials: [String]) throws -> ToolRun {
            try Self.camera(["run", session.path, Fixtures.tool, "track", url, "--dock", "onvif:127.0.0.1:8080", "--duration", "2",
                             "-d", "dnn-face", "--no-face-cues"] + credentials)
        }
        let right = try track(["--onvif-user", "admin", "--onvif-password-file", passwordFile])
        #expect(right.status == 0, "\(right.stderr)")
        #expect(right.stderr.contains("http://admin:***@127.0.0.1:8080/stream.mjpeg: 768x576") && !right.stderr.contains("s3cret"), "\(right.stderr)")
        for wrong in [["--onvif-user", "admin", "--onvif-password", "wrong"], []] {
            let refused = try track(wrong)
            #expect(refused.status != 0, "\(wrong)")
            #expect(refused.stderr.contains("refused GetCapabilities") && refused.stderr.lowercased().contains("not authorized"), "\(refused.stderr)")
        }
    }
}
