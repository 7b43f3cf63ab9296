import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What this process uses: CPU time, resident memory and its peak (from /proc/self).
public enum ProcessResources {
    /// CPU seconds this process has used (user and system).
    public static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Resident memory in MB: `VmHWM` (the peak) or `VmRSS` (now) of /proc/self/status.
    public static func residentMegabytes(_ field: String = "VmHWM") -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let kb = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kb / 1024
    }

    /// Starts the peak (`VmHWM`) afresh from the memory resident now, so that each
    /// measurement's peak is its own (Linux 4.0 and later).
    public static func resetPeak() {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return }
        fputs("5", file)
        fclose(file)
    }
}
