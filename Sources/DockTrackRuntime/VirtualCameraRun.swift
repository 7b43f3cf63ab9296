import DockTrackCore
import DockTrackDock
import DockTrackFraming
import DockTrackMedia
import DockTrackSystem
import DockTrackTracking
import Foundation

extension DockLimits {
    /// A virtual dock's window turning at most `degreesPerSecond`, reaching it in a quarter of a second.
    package static func window(degreesPerSecond: Double) -> DockLimits {
        var speeds = DockLimits.standard
        for axis in [\DockLimits.yaw, \DockLimits.pitch] {
            speeds[keyPath: axis].maximumSpeed = degreesPerSecond * .pi / 180
            speeds[keyPath: axis].maximumAcceleration = 4 * degreesPerSecond * .pi / 180
        }
        return speeds
    }
}

/// `track --virtual-camera`: each frame reframed by a virtual dock (as `reframe` does, with no
/// look-ahead) and published as a camera other programs open; a file plays in real time.
package enum VirtualCameraRun {
    /// What a run published.
    package struct Summary: Sendable, CustomStringConvertible {
        package var name: String
        package var published: Int
        package var passedOver: Int
        /// Capture to output, seconds.
        package var latencyP50: Double
        package var latencyP99: Double

        package var description: String {
            String(format: "virtual camera %@: %d frames published, %d passed over for newer ones; capture-to-output latency p50 %.1f ms, p99 %.1f ms",
                   name, published, passedOver, latencyP50 * 1000, latencyP99 * 1000)
        }
    }

    /// Publishes the reframed pictures of `configuration`'s input as the camera `name` of
    /// `size` until the input ends or `stopping`.
    package static func run(_ configuration: TrackConfiguration, name: String, size: ImageSize,
                           notes: @escaping @Sendable (String) -> Void,
                           stopping: @escaping @Sendable () -> Bool) throws -> Summary {
        let source = try configuration.input.open(configuration.live, notes: notes, stopping: stopping)
        let live = source as? any LiveFrameSource
        let framesPerSecond = source.info.framesPerSecond ?? 30
        var window = CropWindow(sourceSize: source.info.size, aspect: Double(size.width) / Double(size.height),
                                fieldOfView: configuration.fieldOfView)
        window.maximumZoom = max(1, 2 * window.widest.height / Double(size.height))
        var params = configuration.framingParams(for: source.info.size)
        params.limits = .window(degreesPerSecond: 30)
        // The run's driver (the crop window's) owns what the run starts from here on: the
        // source, the detection thread, the output, stopped in the reverse order at its end.
        var reframer: Reframer
        do {
            reframer = try Reframer(dock: VirtualDock(window: window, speeds: params.limits), framing: params, lookAhead: 0,
                                    trace: try configuration.outputs.trace.map { path throws in try LineOutput(path: path) })
        } catch {
            live?.stop()
            throw error
        }
        defer { reframer.end() }
        if let live { reframer.own("live source", stop: live.stop) }
        let liveRun = LiveRun(source, duration: configuration.live.duration)
        let pipeline = try configuration.perception.pipeline(for: source, input: configuration.input, notes: notes, stopping: stopping)
        reframer.own("detection and hands threads") { pipeline.stopThreads() }
        let output: VirtualCameraOutput
        do {
            output = try VirtualCameraOutput(name: name, size: size, framesPerSecond: Int(framesPerSecond.rounded()))
        } catch {
            throw TrackSetupError(error.description)
        }
        reframer.own("virtual camera", stop: output.close)
        let statesOutput = try configuration.outputs.states.map { try LineOutput(path: $0) }
        notes("virtual camera \(name): \(size) at \(Int(framesPerSecond.rounded())) fps")
        let origin = live?.clockOrigin ?? MonotonicClock.now()
        // A file plays in real time (a late frame goes at once).
        var pacer = RealTimePacer(startingAt: MonotonicClock.now())
        var frames = RunFrames.source(source, configuration.frames)
        try frames.forEach(stopping: { liveRun?.shouldStop == true || stopping() }) { item in
            let frame = item.frame
            let capture = liveRun == nil ? pacer.wait(for: frame.time) : origin + frame.time
            let subjects = try item.subjects(by: pipeline)
            guard let shot = try reframer.push(frame, subjects: subjects) else { return true }
            let picture = try shot.frame.image.cropped(to: shot.crop, size: size)
            do {
                try output.publish(picture, capturedAt: capture)
            } catch {
                throw TrackSetupError("\(error)")
            }
            try statesOutput?.write(SubjectStatesRecord(frame: frame.index, time: frame.time, subjects: subjects).jsonLine)
            return true
        }
        reframer.end()
        let latencies = output.latencies
        return Summary(name: name, published: output.written, passedOver: output.replaced,
                       latencyP50: Statistics.percentile(latencies, 0.5), latencyP99: Statistics.percentile(latencies, 0.99))
    }
}
