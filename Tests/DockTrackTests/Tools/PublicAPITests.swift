import Foundation
import Testing

/// What is `public` is the API: a program outside the package (Tests/Embedding/EmbeddingProgram.swift:
/// a session over a file, a detector of its own, a dock by its address, the client) type-checks
/// against the built modules without package access. Narrowing something it needs fails here.
@Suite(.onTestThreads) struct PublicAPITests {
    @Test func anEmbeddingProgramSeesWhatItNeeds() throws {
        let built = URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent()
        let modules = built.appendingPathComponent("Modules")
        try #require(FileManager.default.fileExists(atPath: modules.appendingPathComponent("DockTrack.swiftmodule").path), "no modules at \(modules.path)")
        // The C shims' module maps, as SwiftPM generated them for the build.
        let maps = try FileManager.default.contentsOfDirectory(atPath: built.path).compactMap { name -> String? in
            let map = built.appendingPathComponent(name).appendingPathComponent("module.modulemap").path
            return FileManager.default.fileExists(atPath: map) ? map : nil
        }
        let program = Fixtures.root.appendingPathComponent("Tests/Embedding/EmbeddingProgram.swift").path
        let check = try ToolRun.run("/usr/bin/env", ["swiftc", "-typecheck", "-I", modules.path] + maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + [program])
        #expect(check.status == 0, "an embedding program does not type-check against the public API:\n\(check.stdout)\(check.stderr)")
    }

    /// The libFuzzer harnesses (Fuzz/) are built outside the package (tools/fuzz.sh) against
    /// the fuzzing module: what they call is public.
    @Test func theFuzzHarnessesSeeTheirTargets() throws {
        let built = URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent()
        let maps = try FileManager.default.contentsOfDirectory(atPath: built.path).compactMap { name -> String? in
            let map = built.appendingPathComponent(name).appendingPathComponent("module.modulemap").path
            return FileManager.default.fileExists(atPath: map) ? map : nil
        }
        let fuzz = Fixtures.root.appendingPathComponent("Fuzz")
        let harnesses = try FileManager.default.contentsOfDirectory(atPath: fuzz.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(harnesses.count >= 8, "\(harnesses)")
        for harness in harnesses {
            let check = try ToolRun.run("/usr/bin/env", ["swiftc", "-typecheck", "-parse-as-library", "-I", built.appendingPathComponent("Modules").path]
                                        + maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + [fuzz.appendingPathComponent(harness).path])
            #expect(check.status == 0, "\(harness) does not type-check against the public API:\n\(check.stdout)\(check.stderr)")
        }
    }

    /// The same program with a name that is `package` (the session's control server) does not: the
    /// check above can fail.
    @Test func aPackageNameIsNotSeenFromOutside() throws {
        let built = URL(fileURLWithPath: Fixtures.tool).deletingLastPathComponent()
        let maps = try FileManager.default.contentsOfDirectory(atPath: built.path).compactMap { name -> String? in
            let map = built.appendingPathComponent(name).appendingPathComponent("module.modulemap").path
            return FileManager.default.fileExists(atPath: map) ? map : nil
        }
        let program = try Fixtures.temporaryFolder().appendingPathComponent("inside.swift")
        try "import DockTrack\nfunc peek(_ session: TrackSession) { _ = session.server }\n".write(to: program, atomically: true, encoding: .utf8)
        let check = try ToolRun.run("/usr/bin/env", ["swiftc", "-typecheck", "-I", built.appendingPathComponent("Modules").path]
                                    + maps.flatMap { ["-Xcc", "-fmodule-map-file=\($0)"] } + [program.path])
        #expect(check.status != 0 && (check.stdout + check.stderr).contains("package"), "\(check.stdout)\(check.stderr)")
    }
}
