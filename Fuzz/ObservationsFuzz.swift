// libFuzzer target: bytes of `docktrack track --observations` (custom tracking), framed by
// LineFramer, decoded as DetectionRecord lines, rate-checked, and turned into dock commands by
// the framing controller driving a simulated dock. Any input: no trap, no hang, finite
// commands. Built by `make fuzz` (tools/fuzz.sh) with swiftc -sanitize=fuzzer,address.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func observationsFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var framer = LineFramer(maximumLineLength: 4096)
    var rate = ObservationRateMonitor()
    var controller = FramingController(params: FramingController.Params())
    var dock = SimulatedDock()
    framer.append(bytes)
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
        let v = controller.update(subjects: subjects, captureTime: record.time, poseAtCapture: dock.position,
                                  pose: dock.position, now: record.time)
        precondition([v.x, v.y, v.z].allSatisfy(\.isFinite), "a command that is not finite: \(v)")
        try? dock.apply(.setAngularVelocity(v), at: record.time)
        precondition([dock.position.x, dock.position.y].allSatisfy(\.isFinite), "the dock left the finite numbers")
    }
    return 0
}
