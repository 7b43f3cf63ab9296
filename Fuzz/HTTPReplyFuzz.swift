// libFuzzer entry for HTTP replies (FuzzTargets.httpReply in Sources/DockTrackFuzzing). Linked by
// tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func httpReplyFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.httpReply(UnsafeBufferPointer(start: data, count: size))
    return 0
}
