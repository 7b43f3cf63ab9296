#!/usr/bin/env bash
# A virtual IP camera for tests: ipycam (PyPI, a pure Python virtual IP camera: HTTP MJPEG at
# http://127.0.0.1:8080/stream.mjpeg, snapshots at /snapshot.jpg, ONVIF with a digital PTZ on
# port 8080) streaming a video file, inside a network namespace with nothing but loopback up:
# ipycam announces itself by multicast, and nothing may leave the machine. Needs root (ip netns).
#
#   ip-camera.sh start DIR VIDEO    make the namespace, start the camera, wait until it answers
#   ip-camera.sh run DIR CMD...     run CMD inside the camera's namespace
#   ip-camera.sh kill DIR           stop the camera (the namespace stays: a camera that went away)
#   ip-camera.sh revive DIR VIDEO   start it again; prints the seconds it was away (from kill
#                                   to its snapshot answering again)
#   ip-camera.sh stop DIR           stop the camera and delete the namespace
#
# ipycam (pinned) is installed on first use into a virtual environment, by default
# .build/ipycam beside this script's repository (IPYCAM_VENV overrides), with python3-venv and
# iproute2 from apt when missing.
set -euo pipefail
IPYCAM_VERSION=1.3.0
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${IPYCAM_VENV:-$here/.build/ipycam}"

die() { echo "ip-camera: $*" >&2; exit 1; }

install_apt() {
  local missing=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
}

ensure_ipycam() {
  [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import ipycam" 2>/dev/null && return 0
  install_apt python3-venv iproute2 curl
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q "ipycam==$IPYCAM_VERSION" >&2 || die "pip install ipycam==$IPYCAM_VERSION failed"
}

launch() { # DIR VIDEO: start ipycam in DIR's namespace, wait until its snapshot answers
  local dir="$1" video="$2" ns
  ns="$(cat "$dir/netns")"
  # Frames per second of both streams (IPCAM_FPS, 30 by default) unless the session's
  # configuration says otherwise.
  [ -f "$dir/camera_config.json" ] || printf '{"main_fps": %d, "sub_fps": %d}\n' "${IPCAM_FPS:-30}" "${IPCAM_FPS:-30}" > "$dir/camera_config.json"
  (cd "$dir" && exec ip netns exec "$ns" "$venv/bin/python" -m ipycam --source "$video" --no-timestamp \
     --config "$dir/camera_config.json" --log-level WARNING >>"$dir/ipycam.log" 2>&1) &
  echo $! > "$dir/pid"
  for _ in $(seq 1 600); do
    ip netns exec "$ns" curl -s -o /dev/null --max-time 1 http://127.0.0.1:8080/snapshot.jpg && return 0
    kill -0 "$(cat "$dir/pid")" 2>/dev/null || die "ipycam exited: $(tail -5 "$dir/ipycam.log")"
    sleep 0.05
  done
  die "ipycam did not answer within 30 s: $(tail -5 "$dir/ipycam.log")"
}

halt() { # DIR: stop ipycam and wait until it is gone
  local dir="$1" pid
  [ -f "$dir/pid" ] || return 0
  pid="$(cat "$dir/pid")"
  pkill -TERM -P "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  pkill -KILL -P "$pid" 2>/dev/null || true
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/pid"
}

command="${1:-}"; dir="${2:-}"
[ -n "$command" ] && [ -n "$dir" ] || die "usage: ip-camera.sh start|run|kill|revive|stop DIR ..."
case "$command" in
  start)
    video="$(realpath "${3:?a video file}")"
    ensure_ipycam
    mkdir -p "$dir"; dir="$(realpath "$dir")"
    ns="docktrack-ipcam-$$"
    ip netns add "$ns" || die "cannot make a network namespace (needs root)"
    ip netns exec "$ns" ip link set lo up
    echo "$ns" > "$dir/netns"
    launch "$dir" "$video"
    ;;
  run)
    shift 2
    exec ip netns exec "$(cat "$dir/netns")" "$@"
    ;;
  kill)
    # The outage starts when the camera is told to stop (its stream ends then; the process may
    # take a second more to exit).
    date +%s.%N > "$dir/killed"
    halt "$dir"
    ;;
  revive)
    video="$(realpath "${3:?a video file}")"
    launch "$dir" "$video"
    back="$(date +%s.%N)"
    awk -v a="$back" -v b="$(cat "$dir/killed")" 'BEGIN { printf "%.2f\n", a - b }'
    ;;
  stop)
    halt "$dir"
    [ -f "$dir/netns" ] && ip netns delete "$(cat "$dir/netns")" 2>/dev/null || true
    rm -f "$dir/netns"
    ;;
  *) die "unknown command $command" ;;
esac
