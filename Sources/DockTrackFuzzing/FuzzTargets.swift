import DockTrackCommandLine
import DockTrackClient
import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackRuntime
import Synchronization
import DockTrackTracking
import DockTrackSystem
import Foundation

/// What DockTrack's libFuzzer targets run on each input (`make fuzz`, tools/fuzz.sh: each is
/// wrapped by a `LLVMFuzzerTestOneInput` in Fuzz/ and linked against this module built with
/// `-sanitize=fuzzer,address`). They live in the package so that every build type-checks them
/// against the current API, and the tests replay the seed corpus through them.
///
/// Each checks what must hold for any input (``check(_:_:file:line:)``): a check that fails traps
/// in a fuzzing build (libFuzzer's finding), and is reported to ``failureReporter`` where one is
/// set (the tests record it as a failure of the input, and the suite goes on).
public enum FuzzTargets {
    /// Where a failed check goes instead of a trap, for the code running inside
    /// `$failureReporter.withValue(_:operation:)`: the message, the file and line of the check.
    @TaskLocal public static var failureReporter: (@Sendable (String, StaticString, UInt) -> Void)?

    /// Checks `condition`: when it does not hold, `message` goes to ``failureReporter``, or
    /// traps when there is none.
    static func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
        guard !condition() else { return }
        guard let report = failureReporter else { preconditionFailure(message(), file: file, line: line) }
        report(message(), file, line)
    }

    private static let events = [ScriptedEvent(at: 0.5, event: "button", id: 1, pressed: true),
                                 ScriptedEvent(at: 1.5, event: "undocked"), ScriptedEvent(at: 2.0, event: "docked")]

    /// `bytes` cut into chunks as a socket or a pipe delivers them (the first byte picks the
    /// size, 1...64), framed by `framer`; each item, the last unfinished line included, to `answer`.
    private static func framedInChunks(_ bytes: UnsafeBufferPointer<UInt8>, by framer: inout LineFramer,
                                       _ answer: (LineFramer.Item) -> Void) {
        let chunk = bytes.isEmpty ? 1 : Int(bytes[0] % 64) + 1
        var offset = 0
        while offset < bytes.count {
            framer.append(bytes[offset..<min(bytes.count, offset + chunk)])
            offset += chunk
            while let item = framer.next() { answer(item) }
        }
        if let last = framer.finish() { answer(last) }
    }

    /// Traps unless `line` is one JSON object on one line.
    private static func checkOneJSONObject(_ line: String) {
        check(!line.contains("\n"), "a reply of more than one line")
        check((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not a JSON object: \(line)")
    }

    /// Bytes on a dock protocol connection, cut into chunks the way a socket or a pipe delivers
    /// them (the first byte picks the size, 1...64), framed by LineFramer and answered by
    /// DockSession with scripted events: every malformed line gets an error, every answer is
    /// one line of JSON, the dock's numbers stay finite.
    public static func dockProtocol(_ bytes: UnsafeBufferPointer<UInt8>) {
        var session = DockSession(identity: AccessoryIdentity(name: "fuzz", identifier: UUID(), firmwareVersion: "1", hardwareModel: "fuzz"),
                                  script: events)
        // A small maximum so that the over-long path is reached as often as the others.
        var framer = LineFramer(maximumLineLength: 4096)
        var time = 0.0
        func answer(_ item: LineFramer.Item) {
            let parsed = DockRequest.parse(item)
            if case .success(let request)? = parsed, let t = request.time { time = max(time, t) }
            let replies = session.handle(parsed, at: time)
            if case .failure? = parsed, replies.isEmpty { check(false, "an error without a reply") }
            for reply in replies { checkOneJSONObject(reply) }
            let p = session.dock.position, v = session.dock.velocity
            check([p.x, p.y, p.z, v.x, v.y, v.z].allSatisfy(\.isFinite), "the dock left the finite numbers")
        }
        framedInChunks(bytes, by: &framer, answer)
        _ = session.motionStateLine()
    }

    /// Bytes of `docktrack track --observations` (custom tracking): framed, decoded as detection
    /// lines, rate-checked, and turned into dock commands by the framing controller driving a
    /// simulated dock: every command finite, the dock's pose finite.
    public static func observations(_ bytes: UnsafeBufferPointer<UInt8>) {
        var framer = LineFramer(maximumLineLength: 4096)
        var rate = ObservationRateMonitor()
        var controller = FramingController(params: FramingController.Params())
        var dock = SimulatedDock()
        framer.append(bytes[...])
        var items: [LineFramer.Item] = []
        while let item = framer.next() { items.append(item) }
        if let last = framer.finish() { items.append(last) }
        for item in items {
            guard case .line(let line) = item,
                  let record = try? JSONDecoder().decode(DetectionRecord.self, from: Data(line.utf8)) else { continue }
            _ = record.jsonLine
            try? rate.record(at: record.time)
            guard record.time.isFinite else { continue }
            let subjects = record.observations.enumerated().map { i, o in
                TrackedSubject(id: UUID(), kind: .person, rect: o.rect, saliencyRank: i + 1)
            }
            dock.advance(to: record.time)
            guard let command = controller.update(subjects: subjects, captureTime: record.time, poseAtCapture: dock.position,
                                                  pose: dock.position, now: record.time) else { continue }
            switch command {
            case .setAngularVelocity(let v):
                check([v.x, v.y, v.z].allSatisfy(\.isFinite), "a velocity that is not finite: \(v)")
            case .setOrientation(let o, let duration, _):
                check([o.x, o.y, o.z, duration].allSatisfy(\.isFinite), "an orientation that is not finite: \(o)")
            default:
                break
            }
            _ = try? dock.apply(command, at: record.time)
            check([dock.position.x, dock.position.y].allSatisfy(\.isFinite), "the dock left the finite numbers")
        }
    }

    /// Bytes from an HTTP peer (an ONVIF camera's reply), cut into chunks as a socket delivers
    /// them (the first byte picks the size, 1...64): the parser never keeps more than its
    /// budget, a whole reply's body is within it, and the end of the connection settles it.
    public static func httpReply(_ bytes: UnsafeBufferPointer<UInt8>) {
        let budget = 4096
        var parser = HTTPReplyParser(maximumBytes: budget)
        let chunk = bytes.isEmpty ? 1 : Int(bytes[0] % 64) + 1
        var offset = 0
        do {
            while offset < bytes.count {
                if try parser.append(bytes[offset..<min(bytes.count, offset + chunk)]) { break }
                offset += chunk
            }
            let reply = try parser.finish()
            check(reply.body.count <= budget, "a body of \(reply.body.count) bytes over a budget of \(budget)")
            check((100...599).contains(reply.status), "status \(reply.status)")
        } catch {
            _ = error.description
        }
    }

    /// The parts of a Motion JPEG stream as a camera sends them, each decoded the way
    /// `track URL` reads a stream's pictures (Image.decodingStreamPicture: the header's size
    /// checked, then decoded). Parts are separated by the line `--part`. A part that decodes is
    /// a BGR picture of at least one pixel and at most Image.maximumPixels; any other is passed
    /// over without a crash, a leak, or an allocation of what a header claims.
    public static func mjpegParts(_ bytes: UnsafeBufferPointer<UInt8>) {
        let boundary = Array("\r\n--part\r\n".utf8)
        var start = 0
        var index = 0
        func decode(_ range: Range<Int>) {
            guard let image = Image.decodingStreamPicture(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[range]))) else { return }
            check(image.width > 0 && image.height > 0 && image.channels == 3, "a decoded picture of \(image.size), \(image.channels) channels")
            check(image.width * image.height <= Image.maximumPixels, "a picture of \(image.size) decoded past the limit")
        }
        while index + boundary.count <= bytes.count {
            if bytes[index] == boundary[0] && bytes[index..<index + boundary.count].elementsEqual(boundary) {
                decode(start..<index)
                index += boundary.count
                start = index
            } else {
                index += 1
            }
        }
        decode(start..<bytes.count)
    }

    /// Lines a `track --serve` client or a control page sends (chunked as a socket delivers
    /// them: the first byte picks the size), answered by ``TrackControlSession`` in front of a
    /// frame loop on a simulated dock, a frame every third line with a face in view: every
    /// answer and every line the client is sent is one JSON object on one line, an answer to a
    /// request with an id carries that id, and the dock's numbers stay finite and within its
    /// limits.
    public static func serveRequests(_ bytes: UnsafeBufferPointer<UInt8>) {
        let now = Mutex(0.0)
        let control = TrackControl(limits: .standard, home: .zero, clock: { now.withLock { $0 } })
        guard let loop = try? FrameLoop(controller: FramingController(params: FramingController.Params()), dock: AnyDock(SimulatedDock()),
                                        cameraOnDock: true) else { return }
        var driver = RunDriver(loop: loop)
        let pipeline = TrackingPipeline(detector: nil, cues: nil, identifiers: .sequential)
        let custom = TrackingPipeline(detector: nil, cues: nil, identifiers: .sequential)
        var session = TrackControlSession(control: control,
                                          identity: AccessoryIdentity(name: "fuzz", identifier: UUID(), firmwareVersion: "1", hardwareModel: "fuzz"))
        let face = Observation(type: .humanFace, rect: UnitRect(x: 0.6, y: 0.5, width: 0.1, height: 0.15), confidence: 0.9)
        var framer = LineFramer(maximumLineLength: 4096)
        var lines = 0
        func frame() {
            let time = now.withLock { $0 += 0.05; return $0 }
            let changes = control.changes(for: &driver.loop, pipeline: pipeline, customTracking: custom, at: time)
            driver.loop.merge(changes, at: time)
            guard let step = try? driver.step(recordedAt: time, perceive: { _, _ in try pipeline.process(observations: [face], at: time) }) else { return }
            control.publish(SubjectStatesRecord(frame: Int(time * 20), time: time, subjects: step.subjects), motion: step.atCommand)
            for line in session.pendingLines() { checkOneJSONObject(line) }
            let p = step.atCommand.position, v = step.atCommand.velocity
            check([p.x, p.y, p.z, v.x, v.y, v.z].allSatisfy(\.isFinite), "the dock left the finite numbers")
            check(abs(v.y) <= DockLimits.standard.yaw.maximumSpeed + 1e-9, "a speed past the limit: \(v)")
        }
        func answer(_ item: LineFramer.Item) {
            let parsed = DockRequest.parse(item)
            let time = now.withLock { $0 }
            for reply in session.handle(parsed, at: time) {
                checkOneJSONObject(reply)
                if case .success(let request)? = parsed, let id = request.id {
                    check(reply.hasPrefix(id.tagging("{").dropLast()), "an answer without its request's id: \(reply)")
                }
            }
            lines += 1
            if lines % 3 == 0 { frame() }
        }
        framedInChunks(bytes, by: &framer, answer)
        frame()
        _ = session.sessionEnded(at: now.withLock { $0 })
        frame()
    }

    /// Lines a dock (or a tracker) sends its client, read by the client's one typed reader
    /// (``DockReply``), as the accessory manager and the protocol dock read them: never a trap;
    /// a line read as a message reads again the same; a button's id is no request's.
    public static func dockReplies(_ bytes: UnsafeBufferPointer<UInt8>) {
        var framer = LineFramer(maximumLineLength: 4096)
        framer.append(bytes[...])
        while let item = framer.next() {
            guard case .line(let line) = item, let reply = DockReply(line: line) else { continue }
            check(DockReply(line: line) == reply, "read twice, read differently: \(line.prefix(200))")
            if case .accessoryEvent = reply.message { check(reply.id == nil, "a button's id taken for a request's") }
            if case .error(let code, let message) = reply.message { _ = DockError(code: code, message: message).description }
        }
    }

    /// A `track --config` file: read as TOML and turned into track's options, or refused with
    /// one line that names the file; what it gives is options (`--name`) and their values, none
    /// with a line break.
    public static func configFile(_ bytes: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let file = try ConfigFile(toml: text, path: "fuzz.toml")
            let arguments = file.arguments(leavingOut: [], commandLineInput: .none)
            // Options (--name, --name=value), then the input when the file names one.
            let options = file.input == nil ? arguments[...] : arguments.dropLast()
            check(options.allSatisfy { $0.hasPrefix("--") }, "not an option: \(options.prefix(3))")
            check(file.input == nil || arguments.last == file.input, "the input is not last")
            _ = file.arguments(leavingOut: Set(file.options.map(\.key)), commandLineInput: .live)
        } catch {
            check(error.description.hasPrefix("--config fuzz.toml: ") && !error.description.contains("\n"),
                         "not one line naming the file: \(error.description)")
        }
    }

    /// Bytes of a batch result line (`docktrack report` reads one per input): an entry or one
    /// reason it is not; an entry's figures within the report's bounds, its page's figures
    /// finite.
    public static func batchResult(_ bytes: UnsafeBufferPointer<UInt8>) {
        do {
            let entry = try BatchReport.entry(named: "fuzz", line: Data(bytes), finished: Date(timeIntervalSince1970: 0))
            check((0...BatchReport.largestFrames).contains(entry.frames), "frames \(entry.frames)")
            check(entry.videoSeconds.isFinite && entry.workSeconds.isFinite && entry.videoSeconds >= 0 && entry.workSeconds >= 0,
                         "seconds \(entry.videoSeconds), \(entry.workSeconds)")
            _ = BatchReport(folder: "fuzz", entries: [entry]).lines
        } catch {
            check(!error.description.isEmpty && !error.description.contains("\n"), "not one reason: \(error.description)")
        }
    }

    /// Bytes of a trace (`docktrack plot`): a plot or one reason it is not; a plot is drawn
    /// without a trap, whatever its numbers.
    public static func tracePlot(_ bytes: UnsafeBufferPointer<UInt8>) {
        do {
            let plot = try TracePlot(tsv: String(decoding: bytes, as: UTF8.self), name: "fuzz.tsv")
            check(plot.panels.count <= TracePlot.mostColumns, "\(plot.panels.count) panels")
            _ = try? plot.render(width: 200)
        } catch {
            check(error.description.hasPrefix("fuzz.tsv"), "not a reason naming the trace: \(error.description)")
        }
    }

    /// Bytes of an overview calibration file (`track --overview-calibration`): a mapping whose
    /// numbers are finite, or one reason naming the file.
    public static func overviewCalibration(_ bytes: UnsafeBufferPointer<UInt8>) {
        do {
            let (mapping, fieldOfView) = try OverviewCalibrationFile.parse(String(decoding: bytes, as: UTF8.self), path: "fuzz.toml")
            check(fieldOfView > 1 && fieldOfView < 180, "field of view \(fieldOfView)")
            check((mapping.toDock + mapping.toOverview).allSatisfy { $0.allSatisfy(\.isFinite) }, "a mapping that is not finite")
        } catch {
            check("\(error)".contains("fuzz.toml") && !"\(error)".contains("\n"), "not one line naming the file: \(error)")
        }
    }

    /// Bytes a peer sends the control page (chunked: the first byte picks the size, 1...64),
    /// read as its connection guard reads them: no unfinished head held past the budget, every
    /// head found ends with its blank line and is within the budget, the bytes after an
    /// upgrade are not read as HTTP; each head's Host is judged without a trap, and its token
    /// compared in constant time agrees with a comparison of the bytes.
    public static func pageRequests(_ bytes: UnsafeBufferPointer<UInt8>) {
        let budget = 1024
        var heads = HTTPRequestHeads(maximumBytes: budget)
        let chunk = bytes.isEmpty ? 1 : Int(bytes[0] % 64) + 1
        var offset = 0
        while offset < bytes.count {
            for event in heads.append(bytes[offset..<min(bytes.count, offset + chunk)]) {
                guard case .head(let head) = event else { continue }
                check(head.count <= budget && head.suffix(4).elementsEqual([13, 10, 13, 10]), "a head of \(head.count) bytes")
                let text = String(decoding: head, as: UTF8.self)
                let fields = text.components(separatedBy: "\r\n")
                let host = fields.first { $0.lowercased().hasPrefix("host:") }.map { String($0.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
                _ = HTTPRequestHeads.isLoopbackAuthority(host)
                let target = fields.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                let token = URLComponents(string: target)?.queryItems?.first { $0.name == "token" }?.value
                let expected = "0123456789abcdef0123"
                check(ConstantTime.equal(token, expected) == (token.map { Array($0.utf8) == Array(expected.utf8) } ?? false),
                             "the constant-time comparison disagrees on \(token ?? "nil")")
            }
            check(heads.pending.count <= budget, "\(heads.pending.count) bytes of a head held")
            if heads.refused { break }
            offset += chunk
        }
    }
}
