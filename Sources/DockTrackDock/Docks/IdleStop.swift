import DockTrackCore
import Foundation

/// Stops a dock its frame loop has gone silent on: a dock left turning at the last velocity
/// command (a camera or stream outage, a stalled run) is sent a stop once no command and no
/// motion query has come for ``after`` seconds; the next command moves it again.
///
/// Contact is any call of the loop's (it asks where the dock points every frame), so a velocity
/// held on purpose over many frames is not stopped. A thread of its own waits for the silence:
/// the loop's thread is the one that is stuck.
final class IdleStop: @unchecked Sendable {
    /// Seconds of silence after which a moving dock is stopped.
    let after: Double
    private let clock: @Sendable () -> Double
    private let stop: @Sendable () -> Void
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var lastContact: Double
    private var moving = false
    private var ended = false
    private var fired = 0

    /// `stop` sends the dock a stop (called on the idle thread).
    init(after: Double, clock: @escaping @Sendable () -> Double, stop: @escaping @Sendable () -> Void) {
        self.after = after
        self.clock = clock
        self.stop = stop
        lastContact = clock()
        let thread = Thread { [self] in watch() }
        thread.name = "docktrack-idle-stop"
        thread.start()
    }

    /// The loop was heard from; `moving` says whether the command it just gave keeps the dock
    /// turning (`nil`: no command, only a query).
    func contact(moving: Bool? = nil) {
        condition.lock()
        lastContact = clock()
        if let moving { self.moving = moving }
        condition.broadcast()
        condition.unlock()
    }

    /// How many stops it has sent.
    var stopsSent: Int { condition.withLock { fired } }

    /// Ends the thread.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    private func watch() {
        condition.lock()
        while !ended {
            let silent = clock() - lastContact
            if moving && silent >= after {
                moving = false
                fired += 1
                condition.unlock()
                stop()
                condition.lock()
                continue
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: moving ? max(0.005, after - silent) : 1))
        }
        condition.unlock()
    }

    /// Whether `command` leaves the dock turning when nothing follows it.
    static func keepsMoving(_ command: DockCommand) -> Bool {
        if case .setAngularVelocity(let velocity) = command { return velocity != .zero }
        return false
    }
}
