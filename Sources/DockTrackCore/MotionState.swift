import Foundation

/// What the dock reports about its motion (DockKit's motion state).
public struct MotionState: Sendable, Equatable {
    public var time: Double
    public var position: DockOrientation
    public var velocity: AngularVelocity
    /// Why the last command could not be followed, if it could not.
    public var error: DockError?

    public init(time: Double, position: DockOrientation, velocity: AngularVelocity, error: DockError? = nil) {
        self.time = time
        self.position = position
        self.velocity = velocity
        self.error = error
    }
}
