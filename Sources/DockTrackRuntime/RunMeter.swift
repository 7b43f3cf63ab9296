import DockTrackCore
import Foundation

/// The run's speed as a page shows it: frames a second over the last seconds, and each frame's
/// latency (capture to command for a live camera; the frame's time in the tracker for a file),
/// its median and 99th percentile over the last frames.
package struct RunMeter: Sendable {
    /// The window the rate is measured over (seconds) and the frames the latencies are taken from.
    package static let window = 2.0
    package static let latencyFrames = 300

    private var finishedAt: [Double] = []
    private var latencies: [Double] = []
    package private(set) var frames = 0

    package init() {}

    /// A frame finished `latency` seconds after its capture (or after it entered the tracker),
    /// at `time` (monotonic seconds). A latency that is not finite or below 0 is not counted.
    package mutating func record(latency: Double, at time: Double) {
        frames += 1
        finishedAt.append(time)
        finishedAt.removeAll { $0 < time - Self.window }
        guard latency.isFinite, latency >= 0 else { return }
        latencies.append(latency)
        if latencies.count > Self.latencyFrames { latencies.removeFirst(latencies.count - Self.latencyFrames) }
    }

    /// Frames a second over the window ending at `time` (0 with fewer than two frames in it).
    package func framesPerSecond(at time: Double) -> Double {
        let recent = finishedAt.filter { $0 >= time - Self.window }
        guard recent.count >= 2, let first = recent.first else { return 0 }
        return Double(recent.count - 1) / max(time - first, 1e-3)
    }

    /// `{"type":"runSpeed","framesPerSecond":…,"latencyP50":…,"latencyP99":…,"frames":…}`
    /// (latencies in seconds).
    package func jsonLine(at time: Double) -> String {
        String(format: #"{"type":"runSpeed","framesPerSecond":%.2f,"latencyP50":%.4f,"latencyP99":%.4f,"frames":%d}"#,
               framesPerSecond(at: time), Statistics.percentile(latencies, 0.5), Statistics.percentile(latencies, 0.99), frames)
    }
}
