// libFuzzer entry for serve-requests (FuzzTargets.serveRequests in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func serveRequestsFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.serveRequests(UnsafeBufferPointer(start: data, count: size))
    return 0
}
