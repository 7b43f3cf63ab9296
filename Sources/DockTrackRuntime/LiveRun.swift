import DockTrackCore
import DockTrackMedia
import Foundation
import Synchronization

/// A live run's stop conditions (Ctrl-C, --duration) and its capture-to-output latencies.
public final class LiveRun {
    /// Set by SIGINT/SIGTERM: the frame loop ends after the frame in hand, outputs are closed properly.
    public static let interrupted = Atomic<Bool>(false)

    /// Ctrl-C ends the run cleanly (the annotated video is finished, the summary printed); a
    /// second Ctrl-C kills at once.
    public static func installInterruptHandler() {
        signal(SIGINT) { _ in
            if LiveRun.interrupted.exchange(true, ordering: .relaxed) { _exit(130) }
        }
        signal(SIGTERM) { _ in
            if LiveRun.interrupted.exchange(true, ordering: .relaxed) { _exit(143) }
        }
    }

    public let source: any LiveFrameSource
    public let started = MonotonicClock.now()
    public let duration: Double?
    public private(set) var latencies: [Double] = []

    public init?(_ source: any FrameSource, duration: Double?) {
        guard let live = source as? any LiveFrameSource else { return nil }
        self.source = live
        self.duration = duration
    }

    /// Records how old `frame` is now (call when its output has been written).
    public func finished(_ frame: Frame) {
        latencies.append(MonotonicClock.now() - source.clockOrigin - frame.time)
    }

    public var shouldStop: Bool {
        Self.interrupted.load(ordering: .relaxed) || duration.map { MonotonicClock.now() - started >= $0 } ?? false
    }

    /// "capture to command latency p50 12.3 ms, p99 45.6 ms over N frames; M frames dropped".
    public var summary: String {
        String(format: "capture-to-output latency p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d frames; %d camera frames passed over for newer ones",
               Statistics.percentile(latencies, 0.5) * 1000, Statistics.percentile(latencies, 0.99) * 1000, (latencies.max() ?? 0) * 1000,
               latencies.count, source.droppedFrames)
    }
}
