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

    /// The folders under `parent` and under each of them (a C target's `include` left out).
    static func foldersAndSubfolders(under parent: String) throws -> [String] {
        try folders(under: parent).flatMap { folder in
            [folder] + (try folders(under: folder)).filter { !$0.hasSuffix("/include") }
        }
    }

    @Test func everyFolderOfCodeIsInTheTable() throws {
        let folders = try Self.foldersAndSubfolders(under: "Sources") + Self.folders(under: "Examples")
        #expect(folders.count >= 28, "\(folders)")
        #expect(folders.contains("Sources/DockTrackDock/Backends"), "sub-folders are looked at")
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

    /// Package.swift's targets in its order, each with the targets it depends on (products of
    /// other packages left out).
    static func packageTargets() throws -> [(name: String, dependencies: [String])] {
        let manifest = try String(contentsOf: Fixtures.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targetsStart = try #require(manifest.range(of: "targets: [\n        //")).lowerBound
        let text = manifest[targetsStart...]
        var found: [(String, [String])] = []
        // Each target: `.target(name: "X"` (or systemLibrary, executableTarget, testTarget) up to
        // the next one; its own dependencies are the quoted names in `dependencies: [...]` that
        // are not a `.product(name:`.
        let starts = text.ranges(of: #/\.(target|systemLibrary|executableTarget|testTarget)\(\s*name: "([A-Za-z0-9-]+)"/#)
        for (i, start) in starts.enumerated() {
            let end = i + 1 < starts.count ? starts[i + 1].lowerBound : text.endIndex
            let block = String(text[start.lowerBound..<end])
            let name = try #require(block.firstMatch(of: #/name: "([A-Za-z0-9-]+)"/#)).1
            var dependencies: [String] = []
            if let list = block.firstMatch(of: #/dependencies: \[((?:[^\[\]]|\[[^\]]*\])*)\]/#) {
                let withoutProducts = String(list.1).replacing(#/\.product\([^)]*\)/#, with: "")
                dependencies = withoutProducts.matches(of: #/"([A-Za-z0-9]+)"/#).map { String($0.1) }
            }
            found.append((String(name), dependencies))
        }
        return found
    }

    /// The modules the Swift files of a Sources folder import (its own and C shims only).
    static func imports(of target: String) throws -> Set<String> {
        let folder = Fixtures.root.appendingPathComponent("Sources/\(target)")
        guard let files = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var modules = Set<String>()
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let match = line.firstMatch(of: #/^(?:@[A-Za-z_]+ )*(?:public |package |internal )?import ((?:DockTrack|C)[A-Za-z0-9]*)$/#) else { continue }
                modules.insert(String(match.1))
            }
        }
        return modules
    }

    /// No module imports one it does not declare (it built only because another target pulled
    /// the module in), and each depends only on modules above it in Package.swift.
    @Test func everyImportIsDeclaredAndComesFromAbove() throws {
        let targets = try Self.packageTargets()
        let names = targets.map(\.name)
        #expect(names.contains("DockTrackCore") && names.contains("DockTrackFuzzing") && names.count >= 20, "\(names)")
        for (position, target) in targets.enumerated() where FileManager.default.fileExists(atPath: Fixtures.root.appendingPathComponent("Sources/\(target.name)").path) {
            let undeclared = try Self.imports(of: target.name).subtracting(target.dependencies).subtracting([target.name])
                .filter { names.contains($0) }
            #expect(undeclared.isEmpty, "\(target.name) imports \(undeclared.sorted()) without declaring them in Package.swift")
            let below = target.dependencies.filter { dependency in (names.firstIndex(of: dependency) ?? 0) > position }
            #expect(below.isEmpty, "\(target.name) depends on \(below) listed after it in Package.swift")
        }
    }

    /// DESIGN.md's table lists the modules in Package.swift's order.
    @Test func theTableFollowsThePackagesOrder() throws {
        let targets = try Self.packageTargets().map(\.name)
        let rows = Self.design.split(separator: "\n").compactMap { line -> String? in
            guard let match = line.firstMatch(of: #/^\| `Sources/([A-Za-z0-9-]+)` \|/#) else { return nil }
            return String(match.1)
        }
        #expect(rows.count >= 20)
        #expect(rows == targets.filter { rows.contains($0) }, "DESIGN.md: \(rows); Package.swift: \(targets)")
    }

    /// Signals belong to the executables: no library module reads ``RunInterruption`` (a run, a
    /// wait for a named pipe's writer, a live run's end are stopped by what the caller passes in).
    @Test func onlyTheExecutablesReadTheSignals() throws {
        let folder = Fixtures.root.appendingPathComponent("Sources")
        var readers: [String] = []
        var counted = 0
        for case let file as String in FileManager.default.enumerator(atPath: folder.path)! where file.hasSuffix(".swift") {
            let module = file.split(separator: "/").first.map(String.init) ?? ""
            guard !["docktrack", "docksim"].contains(module), file != "DockTrackSystem/RunInterruption.swift" else { continue }
            counted += 1
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            if code.contains(where: { $0.contains("RunInterruption") }) { readers.append(file) }
        }
        #expect(counted >= 150, "\(counted) files")
        #expect(readers.isEmpty, "library files that read the signals: \(readers)")
    }

    /// The run driver is the one place in Sources where a frame loop is stepped (every mode
    /// paces, steps and ends through it).
    @Test func onlyTheRunDriverStepsTheFrameLoop() throws {
        let folder = Fixtures.root.appendingPathComponent("Sources")
        var steppers: [String] = []
        for case let file as String in FileManager.default.enumerator(atPath: folder.path)! where file.hasSuffix(".swift") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            if code.contains(where: { $0.contains(#/loop!?\.step\(/#) }) { steppers.append(file) }
        }
        #expect(steppers == ["DockTrackRuntime/RunDriver.swift"], "files that step a frame loop: \(steppers)")
    }

    /// No source file is over 500 lines: a file says one thing (TrackControl.swift was 718 lines
    /// of three types, the shim's dockcv.cpp 1,594).
    @Test func noSourceFileIsOver500Lines() throws {
        var long: [String] = []
        var counted = 0
        for top in ["Sources", "Examples"] {
            let folder = Fixtures.root.appendingPathComponent(top)
            guard let files = FileManager.default.enumerator(atPath: folder.path) else { continue }
            for case let file as String in files where [".swift", ".c", ".cpp", ".h", ".hpp"].contains(where: file.hasSuffix) {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                counted += 1
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - (text.hasSuffix("\n") ? 1 : 0)
                if lines > 500 { long.append("\(top)/\(file): \(lines)") }
            }
        }
        #expect(counted >= 150, "\(counted) files")
        #expect(long.isEmpty, "\(long)")
    }
}
