import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What this process uses: CPU time, resident memory and its peak (from /proc/self).
package enum ProcessResources {
    /// CPU seconds this process has used (user and system).
    package static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// How many descriptors this process may have open (RLIMIT_NOFILE's soft limit; 1024
    /// when it cannot be read, Int.max when unlimited).
    package static var descriptorLimit: Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// Resident memory in MB: `VmHWM` (the peak) or `VmRSS` (now) of /proc/self/status.
    package static func residentMegabytes(_ field: String = "VmHWM") -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb / 1024
    }

    /// Starts the peak (`VmHWM`) afresh from the memory resident now, so that each
    /// measurement's peak is its own (Linux 4.0 and later).
    package static func resetPeak() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }
}
