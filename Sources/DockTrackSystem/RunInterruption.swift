import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM as a request to stop: the run in progress ends after the frame in hand,
/// closes its outputs (a video is finished, a summary printed, the dock told to stop) and exits
/// 130 or 143, as a shell expects of a program stopped by that signal. A second signal stops
/// at once.
public enum RunInterruption {
    private static let signalNumber = Atomic<Int32>(0)

    /// Installs the handlers (again is harmless) and unblocks the two signals on the calling
    /// thread, which threads started from it inherit: a parent may start us with them blocked
    /// (Foundation's `Process` does), and then SIGTERM would wait unseen forever.
    public static func install() {
        signal(SIGINT) { number in RunInterruption.received(number) }
        signal(SIGTERM) { number in RunInterruption.received(number) }
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
    }

    private static func received(_ number: Int32) {
        let (exchanged, _) = signalNumber.compareExchange(expected: 0, desired: number, ordering: .relaxed)
        if !exchanged { _exit(128 + number) }
    }

    /// Whether a stop was asked for.
    public static var requested: Bool { signalNumber.load(ordering: .relaxed) != 0 }

    /// The exit status a stopped run ends with (128 + the signal), `nil` when none came.
    public static var exitStatus: Int32? {
        let number = signalNumber.load(ordering: .relaxed)
        return number == 0 ? nil : 128 + number
    }
}
