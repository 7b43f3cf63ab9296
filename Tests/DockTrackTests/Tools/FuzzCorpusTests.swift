import DockTrackFuzzing
import Foundation
import Testing

/// The fuzz targets' checks over their seed corpus (Fuzz/corpus), as `make fuzz` starts them: a
/// change that breaks a check on a known input fails here, without a fuzzing build.
@Suite struct FuzzCorpusTests {
    static func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let folder = Fixtures.root.appendingPathComponent("Fuzz/corpus/\(target)")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            (name, Array(try Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    @Test(arguments: ["dock-protocol", "observations", "http-reply"])
    func theSeedCorpusPassesTheFuzzChecks(target: String) throws {
        let inputs = try Self.corpus(target)
        #expect(inputs.count >= 5, "\(target): \(inputs.count) seeds")
        for input in inputs {
            input.bytes.withUnsafeBufferPointer { bytes in
                switch target {
                case "dock-protocol": FuzzTargets.dockProtocol(bytes)
                case "http-reply": FuzzTargets.httpReply(bytes)
                default: FuzzTargets.observations(bytes)
                }
            }
        }
    }
}
