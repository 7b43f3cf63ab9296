// libFuzzer target: bytes on a dock protocol connection, cut into chunks the way a socket or a
// pipe delivers them, framed by LineFramer and answered by DockSession (with a scripted event
// or two). Checks what must hold for any input: every non-blank line gets an answer, every
// answer is one line of JSON, the dock's numbers stay finite, nothing traps or hangs.
// Built by `make fuzz` (tools/fuzz.sh) with swiftc -sanitize=fuzzer,address.
import Foundation

private let events = [ScriptedEvent(at: 0.5, event: "button", id: 1, pressed: true),
                      ScriptedEvent(at: 1.5, event: "undocked"), ScriptedEvent(at: 2.0, event: "docked")]

@_cdecl("LLVMFuzzerTestOneInput")
public func dockProtocolFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var session = DockSession(identity: AccessoryIdentity(name: "fuzz", identifier: UUID(), firmwareVersion: "1", hardwareModel: "fuzz"),
                              script: events)
    // A small maximum so that the over-long path is reached as often as the others.
    var framer = LineFramer(maximumLineLength: 4096)
    var time = 0.0
    // The first byte picks the chunk size (1...64), as a socket's reads would.
    let chunk = size > 0 ? Int(bytes[0] % 64) + 1 : 1
    var offset = 0
    func answer(_ item: LineFramer.Item) {
        let parsed = DockRequest.parse(item)
        if case .success(let request)? = parsed, let t = request.time { time = max(time, t) }
        let replies = session.handle(parsed, at: time)
        if parsed != nil && replies.isEmpty, case .failure? = parsed { fatalError("an error without a reply") }
        for reply in replies {
            precondition(!reply.contains("\n"), "a reply of more than one line")
            guard (try? JSONSerialization.jsonObject(with: Data(reply.utf8))) is [String: Any] else { fatalError("not JSON: \(reply)") }
        }
        let p = session.dock.position, v = session.dock.velocity
        precondition([p.x, p.y, p.z, v.x, v.y, v.z].allSatisfy(\.isFinite), "the dock left the finite numbers")
    }
    while offset < size {
        framer.append(bytes[offset..<min(size, offset + chunk)])
        offset += chunk
        while let item = framer.next() { answer(item) }
    }
    if let last = framer.finish() { answer(last) }
    _ = session.motionStateLine()
    return 0
}
