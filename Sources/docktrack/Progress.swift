import Foundation

/// A progress line on stderr, redrawn in place, shown only when stderr is a terminal.
struct ProgressLine {
    let total: Int?
    let enabled: Bool
    private let started = ContinuousClock.now
    private var lastDrawn = ContinuousClock.now - .seconds(1)

    init(total: Int?, enabled: Bool = isatty(STDERR_FILENO) != 0) {
        self.total = total
        self.enabled = enabled
    }

    /// Redraws at most 4 times a second.
    mutating func update(done: Int) {
        guard enabled, ContinuousClock.now - lastDrawn >= .milliseconds(250) else { return }
        lastDrawn = ContinuousClock.now
        let seconds = Self.seconds(ContinuousClock.now - started)
        let fps = seconds > 0 ? Double(done) / seconds : 0
        var line = "frame \(done)"
        if let total { line += "/\(total)" }
        line += String(format: ", %.1f fps", fps)
        if let total, fps > 0, total > done {
            line += String(format: ", %.0f s left", Double(total - done) / fps)
        }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
