// libFuzzer entry for config-file (FuzzTargets.configFile in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func configFileFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.configFile(UnsafeBufferPointer(start: data, count: size))
    return 0
}
