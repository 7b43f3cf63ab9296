import Foundation

/// What the dock reports about its motion (DockKit's motion state).
public struct MotionState: Sendable, Equatable {
    public var time: Double
    public var position: DockOrientation
    public var velocity: AngularVelocity
    /// Why the last command could not be followed, if it could not.
    public var error: DockError?
    /// The wall time of the state (DockKit's `timestamp`, seconds since 1970), when the dock says
    /// it: `time` is on the dock's or the run's own clock, which starts near 0.
    public var date: Date?

    public init(time: Double, position: DockOrientation, velocity: AngularVelocity, error: DockError? = nil, date: Date? = nil) {
        self.time = time
        self.position = position
        self.velocity = velocity
        self.error = error
        self.date = date
    }
}

extension MotionState {
    /// `{"type":"motionState","time":…,"position":{…},"velocity":{…}}`, plus `"error"` when the
    /// last command failed: the dock protocol's motion state line.
    public var jsonLine: String {
        var line = JSONLine()
        line.add("type", "motionState")
        line.add("time", time, digits: 3)
        line.add("position", object: position.jsonLine)
        line.add("velocity", object: velocity.jsonLine)
        if let error { line.add("error", error.code) }
        if let date { line.add("date", date.timeIntervalSince1970, digits: 3) }
        return line.text
    }
}
