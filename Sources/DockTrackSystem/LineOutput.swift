import Foundation

/// Where lines go (JSON lines, traces): stdout ("-") or a file opened in place
/// (``OutputFile``), each line written as soon as it is made, whole, from any thread.
public final class LineOutput: Sendable {
    public let path: String
    private let file: OutputFile

    public init(path: String) throws(OutputFile.CannotWrite) {
        self.path = path
        file = try OutputFile.open(path)
    }

    /// Writes `line` and a newline.
    public func write(_ line: String) throws(OutputFile.CannotWrite) {
        try file.write(line: line)
    }
}
