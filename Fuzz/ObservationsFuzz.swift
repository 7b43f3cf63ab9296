// libFuzzer entry for custom-tracking observations (FuzzTargets.observations in
// Sources/DockTrackFuzzing). Linked by tools/fuzz.sh against the package's modules built with
// -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func observationsFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.observations(UnsafeBufferPointer(start: data, count: size))
    return 0
}
