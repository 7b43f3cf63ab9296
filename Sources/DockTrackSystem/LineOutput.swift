import Foundation

/// Where lines go (JSON lines, traces): stdout ("-") or a file, each line written as soon as it
/// is made.
public final class LineOutput {
    /// A file that cannot be created or written.
    public struct CannotWrite: Error, CustomStringConvertible {
        public var path: String
        public var description: String { "\(path): cannot be written" }
    }

    public let path: String
    private let handle: FileHandle

    public init(path: String) throws(CannotWrite) {
        self.path = path
        if path == "-" {
            handle = .standardOutput
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CannotWrite(path: path)
        }
        self.handle = handle
    }

    /// Writes `line` and a newline.
    public func write(_ line: String) throws {
        try handle.write(contentsOf: Data((line + "\n").utf8))
    }
}
