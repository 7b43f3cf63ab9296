import DockTrackCore
import Foundation
import Synchronization

/// A move the dock is making for ``DockAccessoryManager/setOrientation(_:duration:relative:)``
/// or ``DockAccessoryManager/animate(_:)``, as DockKit's `Progress`: how far along it is and
/// when it ends, read from the dock's own motion states.
///
/// A move to an orientation ends at the first motion state in which the dock stands still (every
/// axis slower than 2 mrad/s) at the target (within 2 mrad on pitch and yaw), or stands still
/// after having moved (a target beyond the limits, or a later command that stopped it). An
/// animation (which ends where it began) ends at the first motion state in which the dock
/// stands still once its duration is over.
public final class MotionProgress: Sendable {
    /// Where the dock was asked to point (absolute).
    public let target: DockOrientation
    public let duration: Double
    /// An animation: its end is told by time and motion, not by the target.
    public let isAnimation: Bool
    private let start: DockOrientation

    /// What the motion states have told so far, and who waits for the end.
    private struct State {
        var moved = false
        var lastAtRest: MotionState?
        var latestState: MotionState?
        var beganAt: Double?
        var outcome: Result<MotionState, DockError>?
        var waiting: [CheckedContinuation<MotionState, any Error>] = []
    }
    private let state: Mutex<State>

    /// A move from `start` (the last motion state before the command, when there was one).
    init(target: DockOrientation, duration: Double, from start: DockOrientation, last: MotionState?, isAnimation: Bool = false) {
        self.target = target
        self.duration = duration
        self.isAnimation = isAnimation
        self.start = start
        var initial = State()
        initial.latestState = last
        if let last, max(abs(last.velocity.x), abs(last.velocity.y), abs(last.velocity.z)) < 2e-3 { initial.lastAtRest = last }
        state = Mutex(initial)
    }

    /// 0 at the start, 1 at the target: the share of the way covered by the axis with the
    /// farthest to go (1 once the move has ended).
    public var fractionCompleted: Double {
        state.withLock { state in
            if case .success? = state.outcome { return 1 }
            if isAnimation {
                guard let now = state.latestState?.time, let began = state.beganAt ?? state.lastAtRest?.time, duration > 0 else { return 0 }
                return min(1, max(0, (now - began) / duration))
            }
            guard let position = state.latestState?.position else { return 0 }
            let far = abs(target.y - start.y) >= abs(target.x - start.x) ? \DockVector.y : \DockVector.x
            let whole = target[keyPath: far] - start[keyPath: far]
            guard abs(whole) > 1e-9 else { return 0 }
            return min(1, max(0, (position[keyPath: far] - start[keyPath: far]) / whole))
        }
    }

    /// Whether the move has ended.
    public var isFinished: Bool { state.withLock { $0.outcome != nil } }

    /// When the dock began the move, on its own clock (as its motion states' `time`), when it
    /// said so; else the last motion state seen at rest before it moved.
    public var began: Double? { state.withLock { $0.beganAt ?? $0.lastAtRest?.time } }

    func began(at time: Double?) { state.withLock { $0.beganAt = time } }

    /// Waits for the end of the move and returns the motion state in which it ended; throws
    /// `notConnected` when the connection ends first.
    public func completion() async throws(DockError) -> MotionState {
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<MotionState, any Error>) in
                let done: Result<MotionState, DockError>? = state.withLock { state in
                    if state.outcome == nil { state.waiting.append(continuation) }
                    return state.outcome
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
    func observe(_ motion: MotionState) -> Bool {
        let still = max(abs(motion.velocity.x), abs(motion.velocity.y), abs(motion.velocity.z)) < 2e-3
        let there = max(abs(motion.position.x - target.x), abs(motion.position.y - target.y)) < 2e-3
        let (isAnimation, duration) = (self.isAnimation, self.duration)
        return finish { state -> Result<MotionState, DockError>? in
            state.latestState = motion
            if still && !state.moved { state.lastAtRest = motion }
            if !still && max(abs(motion.velocity.x), abs(motion.velocity.y)) > 1e-2 { state.moved = true }
            if isAnimation {
                // A turning point mid-animation may look still: it ends no sooner than its duration.
                let over = (state.beganAt ?? state.lastAtRest?.time).map { motion.time >= $0 + duration - 0.05 } ?? state.moved
                return still && over ? .success(motion) : nil
            }
            return still && (there || state.moved) ? .success(motion) : nil
        }
    }

    /// The connection ended before the move did.
    func fail(_ error: DockError) {
        finish { _ in .failure(error) }
    }

    @discardableResult
    private func finish(_ decide: (inout State) -> Result<MotionState, DockError>?) -> Bool {
        let (result, waiters): (Result<MotionState, DockError>?, [CheckedContinuation<MotionState, any Error>]) = state.withLock { state in
            guard state.outcome == nil, let result = decide(&state) else { return (nil, []) }
            state.outcome = result
            defer { state.waiting = [] }
            return (result, state.waiting)
        }
        guard let result else { return false }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
        return true
    }
}
