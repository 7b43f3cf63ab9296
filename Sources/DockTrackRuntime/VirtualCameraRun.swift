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
        var source = try configuration.input.open(configuration.live, notes: notes, stopping: stopping)
        defer { (source as? any LiveFrameSource)?.stop() }
        let liveRun = LiveRun(source, duration: configuration.live.duration)
        let pipeline = try configuration.perception.pipeline(for: source, input: configuration.input, notes: notes, stopping: stopping)
        defer { pipeline.worker?.stop() }
        let framesPerSecond = source.info.framesPerSecond ?? 30
        let output: VirtualCameraOutput
        do {
            output = try VirtualCameraOutput(name: name, size: size, framesPerSecond: Int(framesPerSecond.rounded()))
        } catch {
            throw TrackSetupError(error.description)
        }
        defer { output.close() }
        var window = CropWindow(sourceSize: source.info.size, aspect: Double(size.width) / Double(size.height),
                                fieldOfView: configuration.fieldOfView)
        window.maximumZoom = max(1, 2 * window.widest.height / Double(size.height))
        var params = configuration.framingParams(for: source.info.size)
        params.limits = .window(degreesPerSecond: 30)
        var reframer = try Reframer(dock: VirtualDock(window: window, speeds: params.limits), framing: params, lookAhead: 0,
                                    trace: try configuration.outputs.trace.map { path throws in try LineOutput(path: path) })
        let statesOutput = try configuration.outputs.states.map { try LineOutput(path: $0) }
        notes("virtual camera \(name): \(size) at \(Int(framesPerSecond.rounded())) fps")
        let origin = (source as? any LiveFrameSource)?.clockOrigin ?? MonotonicClock.now()
        // A file plays in real time (a late frame goes at once).
        var pacer = RealTimePacer(startingAt: MonotonicClock.now())
        try configuration.frames.forEachFrame(of: &source) { frame in
            let capture = liveRun == nil ? pacer.wait(for: frame.time) : origin + frame.time
            let subjects = try pipeline.process(frame)
            guard let shot = try reframer.push(frame, subjects: subjects) else { return }
            let picture = try shot.frame.image.cropped(to: shot.crop, size: size)
            do {
                try output.publish(picture, capturedAt: capture)
            } catch {
                throw TrackSetupError("\(error)")
            }
            try statesOutput?.write(SubjectStatesRecord(frame: frame.index, time: frame.time, subjects: subjects).jsonLine)
        } stopping: { liveRun?.shouldStop == true || stopping() }
        output.close()
        let latencies = output.latencies
        return Summary(name: name, published: output.written, passedOver: output.replaced,
                       latencyP50: Statistics.percentile(latencies, 0.5), latencyP99: Statistics.percentile(latencies, 0.99))
    }
}
