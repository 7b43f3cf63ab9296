// libFuzzer entry for the dock protocol (FuzzTargets.dockProtocol in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func dockProtocolFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.dockProtocol(UnsafeBufferPointer(start: data, count: size))
    return 0
}
