import Foundation
import Testing

/// DESIGN.md's table is the one description of the layout: every folder of code is in it, and
/// nothing it names is gone.
@Suite(.onTestThreads) struct DesignLayoutTests {
    static let design = (try? String(contentsOf: Fixtures.root.appendingPathComponent("DESIGN.md"), encoding: .utf8)) ?? ""

    static func folders(under parent: String) throws -> [String] {
        let url = Fixtures.root.appendingPathComponent(parent)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            var isFolder: ObjCBool = false
            return !name.hasPrefix(".") && FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder)
                && isFolder.boolValue
        }.map { "\(parent)/\($0)" }.sorted()
    }

    @Test func everyFolderOfCodeIsInTheTable() throws {
        let folders = try Self.folders(under: "Sources") + Self.folders(under: "Examples")
        #expect(folders.count >= 20, "\(folders)")
        let missing = folders.filter { !Self.design.contains("| `\($0)` |") }
        #expect(missing.isEmpty, "DESIGN.md's layout table does not name \(missing)")
    }

    @Test func theTableNamesNoFolderThatIsGone() throws {
        let named = Self.design.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `Sources/") || line.hasPrefix("| `Examples/") else { return nil }
            return line.dropFirst(3).split(separator: "`").first.map(String.init)
        }
        #expect(!named.isEmpty)
        let gone = named.filter { !FileManager.default.fileExists(atPath: Fixtures.root.appendingPathComponent($0).path) }
        #expect(gone.isEmpty, "DESIGN.md names \(gone), which are not in the tree")
    }
}
