import DockTrackCore

/// A constant-velocity Kalman filter for one coordinate: state (position, velocity), a
/// white-noise acceleration process, direct position measurements.
package struct ConstantVelocityFilter: Sendable, Equatable {
    package private(set) var position: Double
    package private(set) var velocity: Double
    /// Covariance [[p00, p01], [p01, p11]].
    private var p00: Double, p01: Double, p11: Double
    /// Acceleration noise spectral density ((units/s²)² · s).
    package var processNoise: Double
    /// Measurement variance (units²).
    package var measurementNoise: Double

    package init(position: Double, positionVariance: Double, velocityVariance: Double,
                processNoise: Double, measurementNoise: Double) {
        self.position = position
        velocity = 0
        p00 = positionVariance
        p01 = 0
        p11 = velocityVariance
        self.processNoise = processNoise
        self.measurementNoise = measurementNoise
    }

    /// The variance of the position estimate.
    package var positionVariance: Double { p00 }

    /// Moves the state `dt` seconds ahead.
    package mutating func predict(by dt: Double) {
        guard dt > 0 else { return }
        position += velocity * dt
        let q = processNoise
        let n00 = p00 + 2 * dt * p01 + dt * dt * p11 + q * dt * dt * dt / 3
        let n01 = p01 + dt * p11 + q * dt * dt / 2
        let n11 = p11 + q * dt
        p00 = n00; p01 = n01; p11 = n11
    }

    /// Folds in a measured position.
    package mutating func update(measurement z: Double) {
        let s = p00 + measurementNoise
        let k0 = p00 / s, k1 = p01 / s
        let innovation = z - position
        position += k0 * innovation
        velocity += k1 * innovation
        let n00 = (1 - k0) * p00
        let n01 = (1 - k0) * p01
        let n11 = p11 - k1 * p01
        p00 = n00; p01 = n01; p11 = n11
    }

    /// Forgets the velocity (a subject lost for long is assumed to stand still).
    package mutating func stop() { velocity = 0 }

    /// Moves the position by `offset` with no change to the velocity or the uncertainty (the
    /// frame of reference moved, not the subject).
    package mutating func move(by offset: Double) { position += offset }

    /// Keeps the velocity within ±`limit` (a speed no subject of this kind reaches).
    package mutating func limitVelocity(to limit: Double) {
        guard limit.isFinite, limit >= 0 else { return }
        velocity = min(max(velocity, -limit), limit)
    }
}

/// A box followed by four constant-velocity filters: centre x, centre y, width, height (unit
/// coordinates, lower-left origin).
package struct BoxFilter: Sendable, Equatable {
    private var centerX, centerY, width, height: ConstantVelocityFilter
    private let maximumSpeed: Double
    private let maximumGrowth: Double

    /// Noise settings, per unit of the image.
    package struct Params: Sendable, Equatable {
        /// How fast a subject's velocity may change (acceleration noise) for the centre.
        package var centerProcessNoise = 0.05
        /// The same for the size (zooming in or walking towards the camera).
        package var sizeProcessNoise = 0.01
        /// How far a detection's box typically is from the truth (standard deviation).
        package var measurementDeviation = 0.01
        /// The fastest a box's centre moves, in its own widths (horizontally) and heights
        /// (vertically) per second. A walker crosses about 2.5 body widths a second, a person
        /// running about 8; a faster estimate comes from a sighting of someone else (detecting
        /// every Nth frame, one wrong pairing would otherwise send the box off the picture
        /// within a few frames).
        package var maximumSpeed = 8.0
        /// The fastest a box's size changes through its velocity, in its own size per second
        /// (a measurement still moves it at once): a person walking towards the camera from 3 m
        /// at 1.5 m/s grows by half a second. A faster estimate comes from a sighting of part of
        /// them (their legs found on their own): coasting on it, a box shrank to nothing within
        /// a second (vtest.avi, walkers reported under 8x16 px; none at 0.75). At 0.5 the
        /// reframed Megamind.avi lagged its close-ups' zooms (the speaker's face centred on 0.899
        /// of the frames, 0.963 at 0.75 and without a limit).
        package var maximumGrowth = 0.75
        package init() {}
    }

    package init(_ rect: UnitRect, params: Params = Params()) {
        let r = params.measurementDeviation * params.measurementDeviation
        func filter(_ value: Double, _ q: Double) -> ConstantVelocityFilter {
            ConstantVelocityFilter(position: value, positionVariance: r, velocityVariance: 0.04, processNoise: q, measurementNoise: r)
        }
        centerX = filter(rect.midX, params.centerProcessNoise)
        centerY = filter(rect.midY, params.centerProcessNoise)
        width = filter(rect.width, params.sizeProcessNoise)
        height = filter(rect.height, params.sizeProcessNoise)
        maximumSpeed = params.maximumSpeed
        maximumGrowth = params.maximumGrowth
    }

    /// The centre's velocity kept within ``Params/maximumSpeed`` of the box's size, the size's
    /// within ``Params/maximumGrowth``.
    private mutating func limitSpeed() {
        let size = rect
        centerX.limitVelocity(to: maximumSpeed * size.width)
        centerY.limitVelocity(to: maximumSpeed * size.height)
        width.limitVelocity(to: maximumGrowth * size.width)
        height.limitVelocity(to: maximumGrowth * size.height)
    }

    package var rect: UnitRect {
        let w = max(0.001, width.position), h = max(0.001, height.position)
        return UnitRect(x: centerX.position - w / 2, y: centerY.position - h / 2, width: w, height: h)
    }

    /// Centre velocity in units per second.
    package var velocity: (x: Double, y: Double) { (centerX.velocity, centerY.velocity) }

    package mutating func predict(by dt: Double) {
        centerX.predict(by: dt); centerY.predict(by: dt); width.predict(by: dt); height.predict(by: dt)
    }

    package mutating func update(_ rect: UnitRect) {
        centerX.update(measurement: rect.midX); centerY.update(measurement: rect.midY)
        width.update(measurement: rect.width); height.update(measurement: rect.height)
        limitSpeed()
    }

    /// Folds in a measured centre: a sighting that found where the box is but did not measure
    /// its size (a template match keeps the size it was given). The size holds still: its
    /// velocity, estimated between two detections, is not extrapolated without a measurement.
    package mutating func update(centerOf rect: UnitRect) {
        centerX.update(measurement: rect.midX); centerY.update(measurement: rect.midY)
        width.stop(); height.stop()
        limitSpeed()
    }

    package mutating func stop() {
        centerX.stop(); centerY.stop(); width.stop(); height.stop()
    }

    /// Moves the box by (`x`, `y`) where the picture moved under it (the camera turned): its
    /// own velocity and size are unchanged.
    package mutating func move(x: Double, y: Double) {
        centerX.move(by: x); centerY.move(by: y)
    }
}
