import DockTrackCore
import Foundation

/// A move the dock is making for ``DockAccessoryManager/setOrientation(_:duration:relative:)``
/// or ``DockAccessoryManager/animate(_:)``, as DockKit's `Progress`: how far along it is and
/// when it ends, read from the dock's own motion states.
///
/// A move to an orientation ends at the first motion state in which the dock stands still (every
/// axis slower than 2 mrad/s) at the target (within 2 mrad on pitch and yaw), or stands still
/// after having moved (a target beyond the limits, or a later command that stopped it). An
/// animation (which ends where it began) ends at the first motion state in which the dock
/// stands still once its duration is over.
public final class MotionProgress: @unchecked Sendable {
    /// Where the dock was asked to point (absolute).
    public let target: DockOrientation
    public let duration: Double
    /// An animation: its end is told by time and motion, not by the target.
    public let isAnimation: Bool
    private let start: DockOrientation
    private let lock = NSLock()
    private var moved = false
    private var lastAtRest: MotionState?
    private var latestState: MotionState?
    private var outcome: Result<MotionState, DockError>?
    private var waiting: [CheckedContinuation<MotionState, any Error>] = []

    /// A move from `start` (the last motion state before the command, when there was one).
    init(target: DockOrientation, duration: Double, from start: DockOrientation, last: MotionState?, isAnimation: Bool = false) {
        self.target = target
        self.duration = duration
        self.isAnimation = isAnimation
        self.start = start
        latestState = last
        if let last, max(abs(last.velocity.x), abs(last.velocity.y), abs(last.velocity.z)) < 2e-3 { lastAtRest = last }
    }

    /// 0 at the start, 1 at the target: the share of the way covered by the axis with the
    /// farthest to go (1 once the move has ended).
    public var fractionCompleted: Double {
        lock.withLock {
            if case .success? = outcome { return 1 }
            if isAnimation {
                guard let now = latestState?.time, let began = beganAt ?? lastAtRest?.time, duration > 0 else { return 0 }
                return min(1, max(0, (now - began) / duration))
            }
            guard let position = latestState?.position else { return 0 }
            let far = abs(target.y - start.y) >= abs(target.x - start.x) ? \DockVector.y : \DockVector.x
            let whole = target[keyPath: far] - start[keyPath: far]
            guard abs(whole) > 1e-9 else { return 0 }
            return min(1, max(0, (position[keyPath: far] - start[keyPath: far]) / whole))
        }
    }

    /// Whether the move has ended.
    public var isFinished: Bool { lock.withLock { outcome != nil } }

    /// When the dock began the move, on its own clock (as its motion states' `time`), when it
    /// said so; else the last motion state seen at rest before it moved.
    public var began: Double? { lock.withLock { beganAt ?? lastAtRest?.time } }
    private var beganAt: Double?

    func began(at time: Double?) { lock.withLock { beganAt = time } }

    /// Waits for the end of the move and returns the motion state in which it ended; throws
    /// `notConnected` when the connection ends first.
    public func completion() async throws(DockError) -> MotionState {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<MotionState, any Error>) in
                let done: Result<MotionState, DockError>? = lock.withLock {
                    if outcome == nil { waiting.append(continuation) }
                    return outcome
                }
                if let done { continuation.resume(with: done.mapError { $0 as any Error }) }
            }
        } catch let error as DockError {
            throw error
        } catch {
            throw .notConnected
        }
    }

    /// A motion state from the dock; returns whether the move has ended.
    @discardableResult
    func observe(_ state: MotionState) -> Bool {
        let still = max(abs(state.velocity.x), abs(state.velocity.y), abs(state.velocity.z)) < 2e-3
        let there = max(abs(state.position.x - target.x), abs(state.position.y - target.y)) < 2e-3
        return finish { () -> Result<MotionState, DockError>? in
            latestState = state
            if still && !moved { lastAtRest = state }
            if !still && max(abs(state.velocity.x), abs(state.velocity.y)) > 1e-2 { moved = true }
            if isAnimation {
                // A turning point mid-animation may look still: it ends no sooner than its duration.
                let over = (beganAt ?? lastAtRest?.time).map { state.time >= $0 + duration - 0.05 } ?? moved
                return still && over ? .success(state) : nil
            }
            return still && (there || moved) ? .success(state) : nil
        }
    }

    /// The connection ended before the move did.
    func fail(_ error: DockError) {
        finish { .failure(error) }
    }

    @discardableResult
    private func finish(_ decide: () -> Result<MotionState, DockError>?) -> Bool {
        let (result, waiters): (Result<MotionState, DockError>?, [CheckedContinuation<MotionState, any Error>]) = lock.withLock {
            guard outcome == nil, let result = decide() else { return (nil, []) }
            outcome = result
            defer { waiting = [] }
            return (result, waiting)
        }
        guard let result else { return false }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        return true
    }
}
