import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackTracking

/// The frame loops `docktrack bench` times, run as `track` runs a recorded video: each frame
/// through a ``RunDriver`` on a command-stream dock whose commands are made and dropped. The
/// executable chooses what to measure and prints; the loops are here, with the others.
package enum BenchLoops {
    /// The run driver of a recorded video, its commands made and dropped.
    package static func driver() throws -> RunDriver<FramingController, CommandStreamDock> {
        RunDriver(loop: try FrameLoop(controller: FramingController(), dock: CommandStreamDock(model: SimulatedDock()) { _ in }, cameraOnDock: false))
    }

    /// Up to `limit` of `frames` through `pipeline` (detected ahead, on threads of their own,
    /// as `track` reads a file, or one after the other); `onFrame` is told the count so far after
    /// each. Each frame's latency, from decoded to commanded (ahead, that includes its wait in
    /// the queue).
    package static func overFile(_ frames: inout RunFrames, pipeline: TrackingPipeline, limit: Int = .max,
                                 onFrame: (Int) -> Void = { _ in }) throws -> [Double] {
        var driver = try driver()
        var latencies: [Double] = []
        try driver.forEachFrame(of: &frames, stopping: { latencies.count >= limit }) { driver, item in
            _ = try driver.step(recordedAt: item.frame.time) { _, _ in try item.subjects(by: pipeline) }
            latencies.append(MonotonicClock.now() - item.decoded)
            onFrame(latencies.count)
            return true
        }
        return latencies
    }

    /// `frames` replayed in real time at `framesPerSecond` on `clock`, as a camera delivers them:
    /// frames that arrive while the one before is still being processed are passed over (newest
    /// wins). Each processed frame's latency from its arrival to its command, and the count
    /// passed over.
    package static func live(_ frames: [Image], framesPerSecond: Double, pipeline: TrackingPipeline,
                             clock: SleepingClock = .monotonic) throws -> (latencies: [Double], passedOver: Int) {
        var driver = try driver()
        var latencies: [Double] = []
        var passedOver = 0
        let start = clock.now()
        var pacer = RealTimePacer(clock: clock, startingAt: start)
        var next = 0
        while next < frames.count {
            pacer.wait(for: Double(next) / framesPerSecond)
            // The newest frame that has arrived by now.
            let newest = min(frames.count - 1, max(next, Int((clock.now() - start) * framesPerSecond)))
            passedOver += newest - next
            let captured = start + Double(newest) / framesPerSecond
            _ = try driver.step(recordedAt: captured - start) { _, _ in
                try pipeline.process(Frame(index: newest, time: captured - start, image: frames[newest]))
            }
            latencies.append(clock.now() - captured)
            next = newest + 1
        }
        return (latencies, passedOver)
    }
}
