#!/usr/bin/env bash
# Builds and runs DockTrack's libFuzzer targets (Fuzz/*.swift) for a bounded time each.
#   tools/fuzz.sh [SECONDS] [TARGET...]      targets: dock-protocol observations http-reply mjpeg-parts
#                                            serve-requests config-file page-requests dock-replies
#                                            batch-result trace-plot overview-calibration (default: all)
# The checks each target makes are in the package (Sources/DockTrackFuzzing, type-checked by
# every build; the tests replay Fuzz/corpus through them). Here SwiftPM builds that module and
# the modules it imports with -sanitize=fuzzer,address into .build-fuzz, and each target is its
# Fuzz/*.swift entry (LLVMFuzzerTestOneInput) linked against those objects: no list of source
# files to keep. Each target starts from its seed corpus in Fuzz/corpus/TARGET and keeps what it
# learns in .build-fuzz/corpus/TARGET. A finding is written to .build-fuzz/ and fails the run;
# reproduce it with `.build-fuzz/TARGET-fuzz FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(dock-protocol observations http-reply mjpeg-parts serve-requests config-file page-requests dock-replies
                                     batch-result trace-plot overview-calibration)
build=.build-fuzz
mkdir -p "$build"
echo "building the package's modules for fuzzing (-sanitize=fuzzer,address)"
swift build --build-path "$build" --target DockTrackFuzzing -c release \
  -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address -Xcxx -fsanitize=fuzzer-no-link,address \
  > "$build/modules.log" 2>&1 || { tail -40 "$build/modules.log" >&2; exit 1; }
products=$build/release
# Every object of every module built (the fuzzing module and what it imports), and the C
# libraries those modules link.
objects=$(find "$products/" -path '*.build/*.o' | grep -v -E '/(docktrack|docksim|dock_client_example|dockkit_samples|DockTrackTests|DockTrackTestKit|DockTrackPage|generate-manual|generate-docc-reference)\.build/')
# The C modules' maps SwiftPM wrote, for the Swift modules that import them.
module_maps=$(find "$products/" -maxdepth 2 -name module.modulemap | sed 's/^/-Xcc -fmodule-map-file=/')
libraries="$(pkg-config --libs opencv4 libavformat libavcodec libswscale libswresample libavutil libv4l2 libv4lconvert alsa) -lstdc++"
for target in "${targets[@]}"; do
  case $target in
    dock-protocol) harness=Fuzz/DockProtocolFuzz.swift ;;
    observations) harness=Fuzz/ObservationsFuzz.swift ;;
    http-reply) harness=Fuzz/HTTPReplyFuzz.swift ;;
    mjpeg-parts) harness=Fuzz/MJPEGPartsFuzz.swift ;;
    serve-requests) harness=Fuzz/ServeRequestsFuzz.swift ;;
    config-file) harness=Fuzz/ConfigFileFuzz.swift ;;
    page-requests) harness=Fuzz/PageRequestsFuzz.swift ;;
    dock-replies) harness=Fuzz/DockRepliesFuzz.swift ;;
    batch-result) harness=Fuzz/BatchResultFuzz.swift ;;
    trace-plot) harness=Fuzz/TracePlotFuzz.swift ;;
    overview-calibration) harness=Fuzz/OverviewCalibrationFuzz.swift ;;
    *) echo "fuzz.sh: unknown target '$target' (dock-protocol, observations, http-reply, mjpeg-parts, serve-requests, config-file, page-requests, dock-replies, batch-result, trace-plot, overview-calibration)" >&2; exit 2 ;;
  esac
  binary=$build/$target-fuzz
  echo "linking $binary"
  # shellcheck disable=SC2086
  swiftc -sanitize=fuzzer,address -parse-as-library -module-name "Fuzz_${target//-/_}" -swift-version 6 -O \
    -I "$products/Modules" $module_maps \
    "$harness" $objects $libraries -o "$binary" 2> "$build/$target-build.log" \
    || { grep -v "Cannot export local symbol" "$build/$target-build.log" >&2; exit 1; }
  mkdir -p ".build-fuzz/corpus/$target"
  echo "fuzzing $target for $seconds s"
  # libFuzzer and ASan report a crash themselves: Swift's backtracer, left on, caught one first
  # and then hung (swift-backtrace waiting on a process that was gone), and the run with it.
  SWIFT_BACKTRACE=enable=no "$binary" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix=".build-fuzz/$target-" -print_final_stats=1 \
    ".build-fuzz/corpus/$target" "Fuzz/corpus/$target" 2>&1 | grep -E "^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" || true
  # (ls of several patterns fails when any one matches nothing: each is looked for alone.)
  found=$(for kind in crash timeout oom leak; do compgen -G ".build-fuzz/$target-$kind-*" || true; done | tr '\n' ' ')
  if [ -n "$found" ]; then
    echo "fuzz.sh: $target found something: $found" >&2
    exit 1
  fi
done
