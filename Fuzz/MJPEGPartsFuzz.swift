// libFuzzer entry for a Motion JPEG stream's parts (FuzzTargets.mjpegParts in
// Sources/DockTrackFuzzing). Linked by tools/fuzz.sh against the package's modules built with
// -sanitize=fuzzer,address.
import DockTrackFuzzing

@_cdecl("LLVMFuzzerTestOneInput")
public func mjpegPartsFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTargets.mjpegParts(UnsafeBufferPointer(start: data, count: size))
    return 0
}
