import DockTrackCore
import DockTrackMedia
import DockTrackSystem
import Foundation
import Synchronization

/// A live run's own end (--duration) and its capture-to-output latencies. A stop asked for
/// from outside (Ctrl-C) is the run's `stopping`, passed in by its owner.
package final class LiveRun {
    package let source: any LiveFrameSource
    package let started = MonotonicClock.now()
    package let duration: Double?
    package private(set) var latencies: [Double] = []

    package init?(_ source: any FrameSource, duration: Double?) {
        guard let live = source as? any LiveFrameSource else { return nil }
        self.source = live
        self.duration = duration
    }

    /// Records how old `frame` is now (call when its output has been written), and returns it.
    @discardableResult
    package func finished(_ frame: Frame) -> Double {
        let latency = MonotonicClock.now() - source.clockOrigin - frame.time
        latencies.append(latency)
        return latency
    }

    package var shouldStop: Bool {
        duration.map { MonotonicClock.now() - started >= $0 } ?? false
    }

    /// "capture to command latency p50 12.3 ms, p99 45.6 ms over N frames; M frames dropped".
    package var summary: String {
        String(format: "capture-to-output latency p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d frames; %d camera frames passed over for newer ones",
               Statistics.percentile(latencies, 0.5) * 1000, Statistics.percentile(latencies, 0.99) * 1000, (latencies.max() ?? 0) * 1000,
               latencies.count, source.droppedFrames)
    }
}
