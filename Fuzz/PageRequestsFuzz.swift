// libFuzzer entry for page-requests (FuzzTargets.pageRequests in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func pageRequestsFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.pageRequests(UnsafeBufferPointer(start: data, count: size))
    return 0
}
