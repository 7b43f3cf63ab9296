// libFuzzer entry for overview-calibration (FuzzTargets.overviewCalibration in Sources/DockTrackFuzzing).
// Linked by tools/fuzz.sh against the package's modules built with -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func overviewCalibrationFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.overviewCalibration(UnsafeBufferPointer(start: data, count: size))
    return 0
}
