import DockTrackCore
import DockTrackDock
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The DockKit contract as an app meets it through `docktrack track --serve` in front of
/// docksim in another process: every answer goes to its own request, and what a client
/// changed is undone when it goes.
@Suite struct ClientContractTests {
    /// A `track` run in front of docksim, with a client that said hello and got the hello back.
    struct Run {
        let docksim: DocksimProcess
        let track: TrackProcess
        let client: LineClient
        let hello: String

        init() throws {
            docksim = try DocksimProcess()
            track = try TrackProcess([Fixtures.sample("vtest.avi"), "--loop", "-d", "fast", "--no-face-cues",
                                      "--dock", "unix:\(docksim.socket)"])
            client = try LineClient(path: track.socket)
            try client.send(#"{"type":"hello","protocols":["org.docktrack.dock/1"]}"#)
            hello = try #require(client.first(within: 30) { $0.hasPrefix(#"{"type":"hello""#) }, "\(track.stderr)")
        }

        /// Sends `line` with `id` and waits for the first answer carrying that id.
        func ask(_ id: Int, _ request: String) throws -> String {
            try client.send(RequestID.number(id).tagging(request))
            return client.first(within: 20) { $0.hasPrefix(#"{"id":\#(id),"#) } ?? "no answer to \(id)"
        }
    }

    @Test func eachAnswerGoesToItsOwnRequestThroughATrackInFrontOfADockInAnotherProcess() throws {
        let run = try Run()
        #expect(try run.ask(1, #"{"command":"setSystemTracking","enabled":false}"#) == #"{"id":1,"type":"done","command":"setSystemTracking"}"#)
        // docksim refuses a negative duration; track takes it to docksim, whose refusal is this
        // request's answer, not the next one's.
        let refused = try run.ask(2, #"{"command":"setOrientation","orientation":{"x":0,"y":0.2,"z":0},"duration":-5}"#)
        #expect(refused.contains(#""type":"error""#) && refused.contains(#""code":"invalidRequest""#), "\(refused)")
        usleep(600_000)  // orientations: at most about two a second
        let moved = try run.ask(3, #"{"command":"setOrientation","orientation":{"x":0,"y":0.2,"z":0},"duration":0.5}"#)
        #expect(moved.contains(#""type":"done","command":"setOrientation""#), "\(moved)")
        // docksim has no roll: the roll velocity is refused at its own id, the stop after it done.
        let roll = try run.ask(4, #"{"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":0.3}}"#)
        #expect(roll.contains(#""code":"notCapable""#), "\(roll)")
        let stop = try run.ask(5, #"{"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":0}}"#)
        #expect(stop == #"{"id":5,"type":"done","command":"setAngularVelocity"}"#, "\(stop)")
        // Several in flight at once: each answered at its own id, the refused one refused.
        try run.client.send(#"{"id":10,"command":"setAngularVelocity","velocity":{"x":0,"y":0.1,"z":0}}"#)
        try run.client.send(#"{"id":11,"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":-0.2}}"#)
        try run.client.send(#"{"id":12,"command":"setAngularVelocity","velocity":{"x":0,"y":0,"z":0}}"#)
        var answers: [String: String] = [:]
        while answers.count < 3, let line = run.client.first(within: 20, where: { $0.hasPrefix(#"{"id":1"#) }) {
            for id in ["10", "11", "12"] where line.hasPrefix(#"{"id":\#(id),"#) { answers[id] = line }
        }
        #expect(answers["10"]?.contains(#""type":"done""#) == true, "\(answers)")
        #expect(answers["11"]?.contains(#""code":"notCapable""#) == true, "\(answers)")
        #expect(answers["12"]?.contains(#""type":"done""#) == true, "\(answers)")
    }
}
