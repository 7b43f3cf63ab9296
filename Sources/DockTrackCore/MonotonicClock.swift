import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in seconds: the clock V4L2 stamps buffers with, and the one capture-to-command
/// latency is measured on.
public enum MonotonicClock {
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
