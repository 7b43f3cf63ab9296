import Foundation

/// Where lines go (JSON lines, traces): stdout ("-") or a file opened in place
/// (``OutputFile``), each line written as soon as it is made, whole, from any thread.
package final class LineOutput: Sendable {
    package let path: String
    private let file: OutputFile

    package init(path: String) throws(OutputFile.CannotWrite) {
        self.path = path
        file = try OutputFile.open(path)
    }

    /// Writes `line` and a newline.
    package func write(_ line: String) throws(OutputFile.CannotWrite) {
        try file.write(line: line)
    }
}
