// An app's view of a dock through DockTrack's client API (`DockAccessoryManager`), as a DockKit
// app would use it: connect, wait until docked; when the dock tracks (`docktrack track --serve`),
// read its tracking states, select a person by a tap on the picture and frame them on the left
// third; then switch system tracking off, drive a short motion and a move to an orientation,
// read the motion state and limits, switch tracking back on. Every call waits for the dock's own
// answer to it and throws that call's error.
//
//   swift run dock-client-example /tmp/docksim.sock     (docksim --socket /tmp/docksim.sock)
//   swift run dock-client-example /tmp/track.sock       (docktrack track clip.mp4 --dock unix:/tmp/docksim.sock --serve /tmp/track.sock)
import DockTrackClient
import Foundation

@main
struct DockClientExample {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard let socket = arguments.first, !socket.hasPrefix("-") else {
            print("usage: dock-client-example SOCKET   (a dock serving the dock protocol there, e.g. docksim --socket SOCKET)")
            exit(2)
        }
        do {
            try await run(socket: socket)
        } catch {
            print("dock-client-example: \(error)")
            exit(1)
        }
    }

    static func run(socket: String) async throws {
        let dock = try DockAccessoryManager(socketPath: socket)
        defer { dock.disconnect() }
        for await change in dock.stateChanges {
            guard case .docked(let accessory) = change else { continue }
            print("docked: \(accessory.name) (\(accessory.hardwareModel ?? "model unknown")), capabilities \(accessory.capabilities.joined(separator: ","))")
            if accessory.capabilities.contains("trackingStates") { try await selectAndFrame(dock) }
            break
        }
        try await dock.perform(.setSystemTracking(false))
        print("system tracking off")
        try await dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: 0.3, z: 0)))
        try await Task.sleep(for: .milliseconds(500))
        try await dock.perform(.setAngularVelocity(.zero))
        let turned = try await dock.motionState()
        print(String(format: "panned for 0.5 s at 0.3 rad/s: pan %.3f rad", turned.position.y))
        do {
            try await dock.perform(.setAngularVelocity(AngularVelocity(x: 0, y: .nan, z: 0)))
        } catch {
            print("a speed that is not a number is refused: \(error.code)")
        }
        try await move(dock, to: DockOrientation(x: 0.05, y: -0.2, z: 0), over: 1)
        let limits = try await dock.limits()
        if let pan = limits.yaw {
            print(String(format: "pan range %.2f...%.2f rad, at most %.2f rad/s", pan.range.lowerBound, pan.range.upperBound, pan.maximumSpeed))
        }
        try await dock.perform(.setSystemTracking(true))
        print("system tracking on")
    }

    /// A move over `seconds`: its progress completes when the dock's motion states show it there.
    static func move(_ dock: DockAccessoryManager, to orientation: DockOrientation, over seconds: Double) async throws {
        let move = try await dock.setOrientation(orientation, duration: seconds)
        let there = try await move.completion()
        let took = there.time - (move.began ?? there.time)
        print(String(format: "moved to pan %.3f, tilt %.3f rad in %.2f s", there.position.y, there.position.x, took))
    }

    /// With a tracker: the first tracking state with a person in it, a tap on that person, the
    /// left third; the tracking states that follow show them ranked first.
    static func selectAndFrame(_ dock: DockAccessoryManager) async throws {
        var states = try dock.trackingStates.makeAsyncIterator()
        var person: TrackedSubject?
        while person == nil, let state = await states.next() {
            person = state.subjects.first { $0.kind == .person }
        }
        guard let person else { return }
        // A tap: unit coordinates with the origin at the upper-left.
        let id = try await dock.selectSubject(atX: person.rect.midX, y: 1 - person.rect.midY)
        print("selected \(id) by a tap at its centre")
        try await dock.setFramingMode(.left)
        print("framing mode left")
        // DockKit's properties, read back from the tracker.
        let mode = try await dock.framingMode(), tracking = try await dock.isSystemTrackingEnabled()
        print("the tracker says: framing mode \(mode.rawValue), system tracking \(tracking ? "on" : "off")")
        // States already on the way may be from before the tap: the first that ranks them first.
        for _ in 0..<100 {
            guard let state = await states.next() else { break }
            if state.subjects.first(where: { $0.saliencyRank == 1 })?.id == id {
                print("frame \(state.frame): the selected person ranks first of \(state.subjects.count) subjects")
                break
            }
        }
    }
}
