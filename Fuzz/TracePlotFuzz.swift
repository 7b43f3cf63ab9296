// libFuzzer entry for trace-plot (FuzzTargets.tracePlot in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func tracePlotFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.tracePlot(UnsafeBufferPointer(start: data, count: size))
    return 0
}
