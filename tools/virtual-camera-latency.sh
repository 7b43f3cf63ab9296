#!/usr/bin/env bash
# The virtual camera's latency, measured as it is used: the emulated camera (tools/emulated-camera.sh)
# plays a clip at 30 fps as /dev/video0, `docktrack track /dev/video0 --virtual-camera` reframes it
# into a PipeWire camera at 1280x720, and a second docktrack reads 100 frames from that camera
# (through pw-v4l2, as a browser or a video-call program would); then the publisher is stopped
# (Ctrl-C), so its numbers cover its start and the reading. Prints the reader's summary (it read
# 1280x720 frames) and the publisher's: frames published and the latency from each frame's
# capture to its entering the virtual camera's pipeline, p50 and p99.
#
#   tools/virtual-camera-latency.sh [DOCKTRACK] [CLIP]
#
# DOCKTRACK defaults to the release build (make release), CLIP to samples/vtest.avi. Used by
# `make bench`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tool="$(realpath "${1:-$here/.build/release/docktrack}")"
clip="${2:-$here/samples/vtest.avi}"
[ -x "$tool" ] || { echo "virtual-camera-latency: no $tool (make release)" >&2; exit 1; }
session="$(mktemp -d /tmp/docktrack-vcam.XXXXXX)"
camera="$here/tools/emulated-camera.sh"
cleanup() { "$camera" stop "$session" >/dev/null 2>&1 || true; rm -rf "$session"; }
trap cleanup EXIT

"$camera" start "$session/camera" "$clip" 30 >/dev/null
"$camera" run "$session/camera" "$tool" track /dev/video0 --virtual-camera docktrack-latency \
  --virtual-camera-size 1280x720 --duration 60 -d fast --detect-async >/dev/null 2>"$session/publisher.err" &
publisher=$!

# The virtual camera's PipeWire node, by name: its serial points pw-v4l2 at it.
serial=""
for _ in $(seq 1 60); do
  serial="$("$camera" run "$session/camera" pw-cli ls Node 2>/dev/null | awk '
    /^\tid / { serial = "" } /object.serial = / { gsub(/"/, "", $3); serial = $3 }
    /node.name = "docktrack-latency"/ { print serial; exit }' || true)"
  [ -n "$serial" ] && break
  sleep 0.3
done
[ -n "$serial" ] || { echo "virtual-camera-latency: no virtual camera node appeared" >&2; cat "$session/publisher.err" >&2; exit 1; }

PIPEWIRE_V4L2_TARGET="$serial" "$camera" run "$session/camera" "$tool" track /dev/video0 --end 100 \
  -d fast --detect-every 10 --no-face-cues --summary 2>&1 >/dev/null | sed 's/^/reader: /'
kill -INT "$publisher" 2>/dev/null || true
wait "$publisher" || { echo "virtual-camera-latency: the publisher failed" >&2; cat "$session/publisher.err" >&2; exit 1; }
grep "virtual camera" "$session/publisher.err" | tail -1 | sed 's/^/publisher: /'
