#!/usr/bin/env bash
# What a control page open costs tracking, measured as it is used: the emulated camera
# (tools/emulated-camera.sh) plays a clip at 30 fps as /dev/video0, `docktrack track /dev/video0`
# drives docksim in another process with `--http`, for SECONDS; once with no page open, once with
# the page open in a headless chromium (which fetches every picture it can and holds the
# WebSocket), alternately, ROUNDS times each. Prints each run's capture-to-output latency p50 and
# p99 and frames (track's own summary), then the same over a file at full speed (no camera, no
# dock: frames a second with and without the page), once sharing both cores with the browser, and
# once with the tracker on core 0 and the browser on core 1 (taskset): what the page costs the
# tracker itself (serving, drawing and encoding the pictures) apart from the browser's own work.
#
#   tools/page-cost.sh [DOCKTRACK] [SECONDS] [ROUNDS]
#
# DOCKTRACK defaults to the release build (make release); needs chromium (make test installs it).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tool="$(realpath "${1:-$here/.build/release/docktrack}")"
seconds="${2:-20}"
rounds="${3:-2}"
docksim="$(dirname "$tool")/docksim"
chromium="$(command -v chromium || command -v chromium-browser || true)"
[ -x "$tool" ] && [ -x "$docksim" ] || { echo "page-cost: no $tool or $docksim (make release)" >&2; exit 1; }
[ -n "$chromium" ] || { echo "page-cost: no chromium (apt-get install chromium)" >&2; exit 1; }
session="$(mktemp -d /tmp/docktrack-page-cost.XXXXXX)"
camera="$here/tools/emulated-camera.sh"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$camera" stop "$session/camera" >/dev/null 2>&1 || true
  rm -rf "$session"
}
trap cleanup EXIT

# Opens the page that `track` printed in ERR in a headless chromium (a fresh profile each time:
# a killed browser leaves its profile locked); its pid in $browser. CORES: taskset's list, or "".
open_page() {
  local err="$1" cores="${2:-}" url=""
  for _ in $(seq 1 100); do
    url="$(grep -o 'http://127.0.0.1:[0-9]*/' "$err" | head -1 || true)"
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "page-cost: track printed no page address" >&2; cat "$err" >&2; exit 1; }
  rm -rf "$session/profile"
  ${cores:+taskset -c "$cores"} "$chromium" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --user-data-dir="$session/profile" \
    --remote-debugging-port=0 --window-size=1200,800 "$url" >/dev/null 2>&1 &
  browser=$!
  pids+=("$browser")
}

"$camera" start "$session/camera" "$here/samples/vtest.avi" 30 >/dev/null
"$docksim" --socket "$session/dock.sock" --duration 3600 >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$session/dock.sock" ] && break; sleep 0.1; done

for round in $(seq 1 "$rounds"); do
  for page in none chromium; do
    "$camera" source "$session/camera" "$here/samples/vtest.avi" 30 >/dev/null  # a fresh source for each client
    err="$session/track-$round-$page.err"
    "$camera" run "$session/camera" "$tool" track /dev/video0 --dock "unix:$session/dock.sock" --duration "$seconds" \
      --http 127.0.0.1:0 --summary >/dev/null 2>"$err" &
    track=$!
    browser=""
    [ "$page" = chromium ] && open_page "$err"
    wait "$track" || { echo "page-cost: track failed" >&2; cat "$err" >&2; exit 1; }
    [ -n "$browser" ] && { kill "$browser" 2>/dev/null || true; wait "$browser" 2>/dev/null || true; }
    echo "live, page $page (round $round): $(grep -o 'capture-to-output latency.*' "$err" | tail -1)"
  done
done

# A file at full speed: frames a second with no page and with one reading every picture it may.
file_runs() {
  local tracker_cores="$1" browser_cores="$2" label="$3"
  for round in $(seq 1 "$rounds"); do
    for page in none chromium; do
      err="$session/file-$round-$page.err"
      ${tracker_cores:+taskset -c "$tracker_cores"} "$tool" track "$here/samples/vtest.avi" --loop --end 1500 --http 127.0.0.1:0 \
        --summary >/dev/null 2>"$err" &
      track=$!
      browser=""
      [ "$page" = chromium ] && open_page "$err" "$browser_cores"
      wait "$track" || { echo "page-cost: track failed" >&2; cat "$err" >&2; exit 1; }
      [ -n "$browser" ] && { kill "$browser" 2>/dev/null || true; wait "$browser" 2>/dev/null || true; }
      echo "file, $label, page $page (round $round): $(grep -E '^docktrack: [0-9]+ frames' "$err" | tail -1)"
    done
  done
}
"$camera" stop "$session/camera" >/dev/null 2>&1 || true   # the emulated camera's pipeline took CPU from the file runs
file_runs "" "" "both cores shared"
command -v taskset >/dev/null && file_runs 0 1 "tracker on core 0, browser on core 1"
