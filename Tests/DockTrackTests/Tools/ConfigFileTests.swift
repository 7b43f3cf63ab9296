import DockTrack
import Foundation
import Testing

/// `track --config FILE`: a saved setup in TOML, the command line over it, and every bad file
/// refused with what is wrong.
@Suite(.onTestThreads) struct ConfigFileTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A setup naming the clip, the detector, framing, limits, the dock and a control page
    /// beyond loopback with a token from a file; the command line changes the framing mode.
    @Test func aSavedSetupRunsAndTheCommandLineOverridesIt() throws {
        let docksim = try DocksimProcess()
        defer { withExtendedLifetime(docksim) {} }
        let folder = try Fixtures.temporaryFolder()
        let tokenFile = folder.appendingPathComponent("token")
        let token = "k+/=Zq8Yw2pX7vN4bR1sT6uE"  // base64's characters, which a URL must encode
        try (token + "\n").write(to: tokenFile, atomically: true, encoding: .utf8)
        let config = folder.appendingPathComponent("docktrack.toml")
        try """
            # the rig in the corner
            input = "\(Fixtures.sample("vtest.avi"))"
            loop = true
            detector = "fast"
            no-face-cues = true
            mode = "left"
            max-pan-speed = 20
            dock = "unix:\(docksim.socket)"
            http = "127.0.0.2:0"
            http-token-file = "\(tokenFile.path)"
            """.write(to: config, atomically: true, encoding: .utf8)
        let track = try TrackProcess(["--config", config.path, "--mode", "center"])
        defer { withExtendedLifetime(track) {} }
        let client = try LineClient(path: track.socket)
        try client.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
        #expect(client.first(within: 30) { $0.hasPrefix(#"{"type":"hello""#) } != nil, "\(track.stderr)")
        try client.send(#"{"id":1,"command":"getFramingMode"}"#)
        #expect(client.first(within: 20) { $0.hasPrefix(#"{"id":1,"#) }?.contains(#""mode":"center""#) == true, "the command line's mode")
        try client.send(#"{"id":2,"command":"getLimits"}"#)
        let limits = client.first(within: 20) { $0.hasPrefix(#"{"id":2,"#) } ?? ""
        #expect(limits.contains(#""yaw":{"maximumSpeed":0.3491"#), "the file's 20 degrees a second: \(limits)")
        // The page, where the file put it, takes the file's token; a token from a file is not
        // printed (a service's log would keep it).
        let (host, port, printed) = try ControlPageTests.address(track)
        #expect(host == "127.0.0.2" && printed == nil && !track.stderr.contains(token), "\(track.stderr)")
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try RawHTTPClient(host: host, port: port).request("/?token=\(encoded)").status == 200)
        #expect(try RawHTTPClient(host: host, port: port).request("/").status == 401)
    }

    /// The example in docs/ parses and runs, with the command line's clip, dock and page over
    /// its camera, dock and address (its camera settings then say nothing).
    @Test func theDocumentedExampleRunsWithTheCommandLineOverIt() throws {
        let docksim = try DocksimProcess()
        defer { withExtendedLifetime(docksim) {} }
        let tokenFile = try Fixtures.temporaryFolder().appendingPathComponent("token")
        try "0123456789abcdef0123\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let example = Self.repository.appendingPathComponent("docs/docktrack.toml").path
        let run = try ToolRun.docktrack(["track", Fixtures.sample("vtest.avi"), "--config", example, "--dock", "unix:\(docksim.socket)",
                                         "--http", "127.0.0.1:0", "--http-token-file", tokenFile.path, "--end", "20", "-d", "fast", "--summary"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("20 frames"), "\(run.stderr)")
    }

    /// Every bad file is refused before anything runs (exit 64), saying what is wrong.
    @Test(arguments: [
        ("bogus = 1", "Unknown option '--bogus'"),
        ("[camera]\nfps = 30", "[camera]: sections are not read"),
        ("mode = \"left", "line 1"),
        ("mode = \"sideways\"", "'sideways' is invalid"),
        ("max-pan-speed = nan", "max-pan-speed: not a finite number"),
        ("max-pan-speed = -5", "speeds must be positive"),
        ("object = [[1, 2]]", "object: a list of strings or numbers"),
        ("config = \"other.toml\"", "cannot name another"),
        ("when = 1979-05-27", "when: a date"),
        ("input = 3", "input: a path in quotes"),
    ])
    func aBadFileIsRefusedWithWhatIsWrong(text: String, words: String) throws {
        let config = try Fixtures.temporaryFolder().appendingPathComponent("bad.toml")
        try (text.contains("input") ? text : text + "\ninput = \"\(Fixtures.sample("vtest.avi"))\"").write(to: config, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["track", "--config", config.path, "--end", "2"])
        #expect(run.status == 64 && run.stderr.contains("--config \(config.path): ") && run.stderr.contains(words), "\(run.status) \(run.stderr)")
        #expect(run.stdout.isEmpty, "nothing ran")
    }

    /// A path that is not a setup: missing, a folder, a device, too large, not text.
    @Test func aPathThatIsNotASetupIsRefused() throws {
        let folder = try Fixtures.temporaryFolder()
        let large = folder.appendingPathComponent("large.toml")
        try Data(repeating: 0x23, count: (1 << 20) + 1).write(to: large)  // a comment of 1 MiB
        let binary = folder.appendingPathComponent("binary.toml")
        try Data([0xFF, 0xFE, 0x00, 0x41]).write(to: binary)
        for (path, words) in [("/nonexistent/docktrack.toml", "no such file"), (folder.path, "a directory, not a file"),
                              ("/dev/zero", "a device or socket, not a file"), (large.path, "larger than"), (binary.path, "not UTF-8")] {
            let run = try ToolRun.docktrack(["track", "--config", path])
            #expect(run.status == 64 && run.stderr.contains(words), "\(path): \(run.status) \(run.stderr)")
        }
    }

    /// A section header, well formed or not (`[\u{FFFD}ion]` was found by the config-file fuzz
    /// target when toml++ read these files), is one line and exit 64, with its line.
    @Test func aSectionHeaderIsRefusedWithItsLine() throws {
        let config = try Fixtures.temporaryFolder().appendingPathComponent("bad.toml")
        try "x = 1\n[\u{FFFD}ion]\n".write(to: config, atomically: true, encoding: .utf8)
        let run = try ToolRun.docktrack(["track", "--config", config.path])
        #expect(run.status == 64 && run.stderr.contains("line 2, column 1: [\u{FFFD}ion]: sections are not read"), "\(run.status) \(run.stderr)")
        // The same characters inside a multi-line string are the string's; the quoted header after it is refused.
        try "a = \"\"\"\n[\u{E9}]\n\"\"\"\n[\"\u{E9}\"]\nb = 1\n".write(to: config, atomically: true, encoding: .utf8)
        let quoted = try ToolRun.docktrack(["track", "--config", config.path])
        #expect(quoted.status == 64 && quoted.stderr.contains("line 4, column 1: [\"\u{E9}\"]: sections are not read"), "\(quoted.stderr)")
    }
}
