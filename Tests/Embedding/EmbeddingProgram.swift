// A program that embeds DockTrack, as one outside this package would write it: it sees only the
// public API (no `package` names). PublicAPITests type-checks it against the built modules, so
// narrowing what an embedding program needs fails a test. Not built by the package itself.
import DockTrack
import DockTrackClient

// A run over a file; its dock a simulator on the command stream; the session's summary.
var configuration = TrackConfiguration(input: .file("samples/vtest.avi"))
configuration.frames = FrameSelection(start: 0, end: 10)
let session = try TrackSession(opening: configuration, notes: { print($0) }, commands: { print($0) })
let summary = try session.run(stopping: { false })
print(summary.lines.joined(separator: "\n"))

// A stage of one's own behind a stage protocol: a detector that finds nobody.
final class NobodyDetector: Detector {
    let name = "nobody"
    func detect(in image: Image, minimumConfidence: Double) throws(DetectorError) -> [Observation] { [] }
}
let image = try Image(pixels: [UInt8](repeating: 128, count: 64 * 48), width: 64, height: 48, channels: 1)
print(try NobodyDetector().detect(in: image, minimumConfidence: 0.5).count)

// A dock by its address (here the command stream), stopped as every run ends.
var dock = try DockAddress("-").open(limits: DockLimits(), home: .zero, clock: { 0 }, onvif: ONVIFSettings(), followedLive: false) { print($0) }
RunEnd.end(&dock, at: 0)

// The client, as an app drives a running docktrack or docksim.
func drive(_ socket: String) async throws {
    let dock = try await DockAccessoryManager.connect(to: socket)
    defer { dock.disconnect() }
    print(try await dock.accessory().name)
    try await dock.perform(.setSystemTracking(false))
    for await state in try dock.motionStates.prefix(1) { print(state.position) }
}
