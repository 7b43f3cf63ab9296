import DockTrackCore
import Foundation
import Synchronization

/// A move the dock is making for ``DockAccessoryManager/setOrientation(_:duration:relative:)``
/// or ``DockAccessoryManager/animate(_:)``, as DockKit's `Progress`: how far along it is and
/// when it ends, read from the dock's own motion states.
///
/// Only motion states from when the dock began the move count: none before the dock took the
/// command (its `done`), none timed before the move's start on the dock's clock (`done`'s
/// `time`). (An at-rest or still-decelerating state that crossed the command once ended a move
/// after 0.04 s at the wrong pose through `track --serve`.) A move to an orientation then ends
/// at the first motion state in which the dock stands still (every axis slower than 2 mrad/s) at
/// the target (within 2 mrad on pitch and yaw), or stands still after having turned toward it
/// (a target beyond the limits, or a later command that stopped it). An animation (which ends
/// where it began) ends at the first motion state in which the dock stands still once its
/// duration is over. A cancelled move (``cancel()``) ends once the dock has stood still for a
/// tenth of a second, from 0.3 s after the stop.
public final class MotionProgress: Sendable {
    /// Where the dock goes (absolute): as the dock said when it took the command, else as the
    /// client worked it out.
    public var target: DockOrientation { state.withLock { $0.target } }
    public let duration: Double
    /// An animation: its end is told by time and motion, not by the target.
    public let isAnimation: Bool
    private let start: DockOrientation

    /// What the motion states have told so far, and who waits for the end.
    private struct State {
        var moved = false
        var lastAtRest: MotionState?
        var latestState: MotionState?
        var target: DockOrientation
        var beganAt: Double?
        /// The dock took the command (its `done` came).
        var acknowledged = false
        var cancelled = false
        /// The dock's time when the move was cancelled, and the still state a cancelled move may end in.
        var cancelledAt = -Double.infinity
        var stillSince: MotionState?
        var outcome: Result<MotionState, DockError>?
        var waiting: [CheckedContinuation<MotionState, any Error>] = []
    }
    private let state: Mutex<State>
    /// Sends the stop that cancels the move.
    private let stop: @Sendable () async throws(DockError) -> Void

    /// A move from `start` (the last motion state before the command, when there was one);
    /// `stop` stops the dock for ``cancel()``.
    init(target: DockOrientation, duration: Double, from start: DockOrientation, last: MotionState?, isAnimation: Bool = false,
         stop: @escaping @Sendable () async throws(DockError) -> Void) {
        self.duration = duration
        self.isAnimation = isAnimation
        self.start = start
        self.stop = stop
        var initial = State(target: target)
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
            let target = state.target
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

    /// The dock took the command; the move began at `time` on its clock and goes to `target`,
    /// when it said.
    func began(at time: Double?, toward target: DockOrientation? = nil) {
        state.withLock { state in
            state.beganAt = time
            if let target { state.target = target }
            state.acknowledged = true
        }
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Stops the move where the dock is (DockKit's `Progress.cancel()`): the dock is told to
    /// stop, and ``completion()`` returns the still state it stopped in. A move that has ended
    /// is left as it was.
    public func cancel() async throws(DockError) {
        let going = state.withLock { state -> Bool in
            guard state.outcome == nil else { return false }
            state.cancelled = true
            state.cancelledAt = state.latestState?.time ?? -.infinity
            return true
        }
        if going { try await stop() }
    }

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
        let (isAnimation, duration, start) = (self.isAnimation, self.duration, self.start)
        return finish { state -> Result<MotionState, DockError>? in
            let target = state.target
            let there = max(abs(motion.position.x - target.x), abs(motion.position.y - target.y)) < 2e-3
            state.latestState = motion
            // Before the dock took the command, or timed before the move began: the motion of before.
            guard state.acknowledged, motion.time >= state.beganAt ?? -.infinity else {
                if still { state.lastAtRest = motion }
                return nil
            }
            if state.cancelled {
                // Stopped where it is: still for a tenth of a second, from 0.3 s after the stop
                // was asked (a tracker's states are its model of the dock, which stops a moment
                // later than the model).
                guard motion.time >= state.cancelledAt + 0.3, still else {
                    state.stillSince = nil
                    return nil
                }
                guard let since = state.stillSince, motion.time - since.time >= 0.1,
                      max(abs(motion.position.x - since.position.x), abs(motion.position.y - since.position.y)) < 1e-3 else {
                    state.stillSince = motion
                    return nil
                }
                return .success(motion)
            }
            if still && !state.moved { state.lastAtRest = motion }
            if isAnimation {
                if !still && max(abs(motion.velocity.x), abs(motion.velocity.y)) > 1e-2 { state.moved = true }
            } else {
                // Turning toward the target on an axis that has a way to go.
                state.moved = state.moved || [\DockVector.x, \DockVector.y].contains { axis in
                    let way = target[keyPath: axis] - start[keyPath: axis]
                    return abs(way) > 2e-3 && motion.velocity[keyPath: axis] * way > 0 && abs(motion.velocity[keyPath: axis]) > 1e-2
                }
            }
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
