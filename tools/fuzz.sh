#!/usr/bin/env bash
# Builds and runs DockTrack's libFuzzer targets (Fuzz/*.swift) for a bounded time each.
#   tools/fuzz.sh [SECONDS] [TARGET...]      targets: dock-protocol observations (default: both)
# Each target is built with `swiftc -sanitize=fuzzer,address` from the pure-Swift sources it
# exercises (no OpenCV, no devices), starts from its seed corpus in Fuzz/corpus/TARGET and keeps
# what it learns in .build-fuzz/corpus/TARGET. A finding is written to .build-fuzz/ and fails
# the run; reproduce it with `.build-fuzz/TARGET-fuzz FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(dock-protocol observations)
# The pure-Swift sources the targets exercise: all of DockTrackCore, the simulated dock and the
# protocol session, the framing controller. They are compiled as one module, so their
# `import DockTrack...` lines are dropped in a copy under .build-fuzz/src.
sources=(
  Sources/DockTrackCore/*.swift
  Sources/DockTrackDock/Docks/SimulatedDock.swift Sources/DockTrackDock/Session/DockSession.swift
  Sources/DockTrackFraming/FramingController.swift Sources/DockTrackFraming/AxisController.swift
)
rm -rf .build-fuzz/src
mkdir -p .build-fuzz/src
for file in "${sources[@]}"; do
  sed -E '/^import DockTrack[A-Za-z]*$/d' "$file" > ".build-fuzz/src/$(basename "$file")"
done
sources=(.build-fuzz/src/*.swift)
mkdir -p .build-fuzz
for target in "${targets[@]}"; do
  case $target in
    dock-protocol) harness=Fuzz/DockProtocolFuzz.swift ;;
    observations) harness=Fuzz/ObservationsFuzz.swift ;;
    *) echo "fuzz.sh: unknown target '$target' (dock-protocol, observations)" >&2; exit 2 ;;
  esac
  binary=.build-fuzz/$target-fuzz
  echo "building $binary"
  swiftc -sanitize=fuzzer,address -parse-as-library -module-name DockTrackFuzz -swift-version 6 -O \
    "${sources[@]}" "$harness" -o "$binary" 2> ".build-fuzz/$target-build.log" \
    || { grep -v "Cannot export local symbol" ".build-fuzz/$target-build.log" >&2; exit 1; }
  mkdir -p ".build-fuzz/corpus/$target"
  echo "fuzzing $target for $seconds s"
  "$binary" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix=".build-fuzz/$target-" -print_final_stats=1 \
    ".build-fuzz/corpus/$target" "Fuzz/corpus/$target" 2>&1 | grep -E "^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written)" || true
  if ls .build-fuzz/$target-crash-* .build-fuzz/$target-timeout-* .build-fuzz/$target-oom-* .build-fuzz/$target-leak-* >/dev/null 2>&1; then
    echo "fuzz.sh: $target found something: $(ls .build-fuzz/$target-crash-* .build-fuzz/$target-timeout-* .build-fuzz/$target-oom-* .build-fuzz/$target-leak-* 2>/dev/null | tr '\n' ' ')" >&2
    exit 1
  fi
done
