// libFuzzer entry for batch-result (FuzzTargets.batchResult in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func batchResultFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.batchResult(UnsafeBufferPointer(start: data, count: size))
    return 0
}
