// libFuzzer entry for dock-replies (FuzzTargets.dockReplies in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func dockRepliesFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.dockReplies(UnsafeBufferPointer(start: data, count: size))
    return 0
}
