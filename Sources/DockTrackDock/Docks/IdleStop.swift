import DockTrackCore
import DockTrackSystem
import Foundation
import Synchronization

/// Stops a dock its frame loop has gone silent on: a dock left turning at the last velocity
/// command (a camera or stream outage, a stalled run) is sent a stop once no command and no
/// motion query has come for ``after`` seconds; the next command moves it again.
///
/// Contact is any call of the loop's (it asks where the dock points every frame), so a velocity
/// held on purpose over many frames is not stopped. A thread of its own waits for the silence:
/// the loop's thread is the one that is stuck.
final class IdleStop: Sendable {
    /// Seconds of silence after which a moving dock is stopped.
    let after: Double
    private let clock: @Sendable () -> Double
    private let stop: @Sendable () -> Void
    private struct State {
        var lastContact: Double
        var moving = false
        var ended = false
        var fired = 0
    }
    private let state: Monitor<State>
    private let watching = Mutex<OwnedThread?>(nil)

    /// `stop` sends the dock a stop (called on the idle thread).
    init(after: Double, clock: @escaping @Sendable () -> Double, stop: @escaping @Sendable () -> Void) {
        self.after = after
        self.clock = clock
        self.stop = stop
        state = Monitor(State(lastContact: clock()))
        // The thread holds this until end().
        watching.withLock { $0 = OwnedThread(named: "docktrack idle") { [self] in watch() } }
    }

    /// The loop was heard from; `moving` says whether the command it just gave keeps the dock
    /// turning (`nil`: no command, only a query).
    func contact(moving: Bool? = nil) {
        let now = clock()
        state.withLock {
            $0.lastContact = now
            if let moving { $0.moving = moving }
        }
    }

    /// How many stops it has sent.
    var stopsSent: Int { state.withLock { $0.fired } }

    /// Ends the thread and waits for it.
    func end() {
        state.withLock { $0.ended = true }
        watching.withLock { $0?.join() }
    }

    deinit { end() }

    private func watch() {
        while true {
            // What the state says now: the thread ends, stops the dock, or waits for a contact
            // (or the silence's end) without missing one made meanwhile.
            let seen = state.withLock { $0 }
            if seen.ended { return }
            let silent = clock() - seen.lastContact
            if seen.moving && silent >= after {
                let fire = state.withLock { now in
                    guard now.moving && now.lastContact == seen.lastContact && !now.ended else { return false }
                    now.moving = false
                    now.fired += 1
                    return true
                }
                if fire { stop() }
                continue
            }
            state.wait(for: { $0.ended || $0.lastContact != seen.lastContact || $0.moving != seen.moving },
                       until: Date(timeIntervalSinceNow: seen.moving ? max(0.005, after - silent) : 1))
        }
    }

    /// Whether `command` leaves the dock turning when nothing follows it.
    static func keepsMoving(_ command: DockCommand) -> Bool {
        if case .setAngularVelocity(let velocity) = command { return velocity != .zero }
        return false
    }
}
