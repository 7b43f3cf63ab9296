// An app's view of a dock through DockTrack's client API (`DockAccessoryManager`), as a DockKit
// app would use it: connect, wait until docked, switch system tracking off, drive a short motion
// and a move to an orientation, read the motion state and limits, switch tracking back on.
// Every call waits for the dock's own answer to it and throws that call's error.
//
//   swift run dock-client-example /tmp/docksim.sock     (docksim --socket /tmp/docksim.sock)
import DockTrack
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
            print("docked: \(accessory.name) (\(accessory.hardwareModel)), capabilities \(accessory.capabilities.joined(separator: ","))")
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
        } catch let error as DockError {
            print("a speed that is not a number is refused: \(error.code)")
        }
        try await dock.perform(.setOrientation(DockOrientation(x: 0.05, y: -0.2, z: 0), duration: 1, relative: false))
        try await Task.sleep(for: .milliseconds(1500))
        let there = try await dock.motionState()
        print(String(format: "moved to pan %.3f, tilt %.3f rad", there.position.y, there.position.x))
        let limits = try await dock.limits()
        print(String(format: "pan range %.2f...%.2f rad, at most %.2f rad/s", limits.yaw.range.lowerBound, limits.yaw.range.upperBound, limits.yaw.maximumSpeed))
        try await dock.perform(.setSystemTracking(true))
        print("system tracking on")
    }
}
