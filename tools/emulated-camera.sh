#!/usr/bin/env bash
# A camera without a camera: PipeWire's V4L2 emulation publishing a media file as /dev/video0.
# No kernel module is needed; programs run under `pw-v4l2`, which intercepts open/ioctl/mmap.
#
#   tools/emulated-camera.sh start DIR MEDIA [FPS]   start dbus, pipewire, wireplumber and a GStreamer
#                                                    pipeline playing MEDIA (a video plays once at its
#                                                    own rate, or at FPS; an image is shown for ever)
#   tools/emulated-camera.sh daemons DIR              start dbus, pipewire and wireplumber only (an audio graph)
#   tools/emulated-camera.sh source DIR MEDIA [FPS]  (re)start only the GStreamer source (replug)
#   tools/emulated-camera.sh second DIR MEDIA [FPS]  (re)start a second camera beside the first
#                                                    (an overview camera: /dev/video1 under run)
#   tools/emulated-camera.sh unplug DIR              stop only the GStreamer source (the camera goes away)
#   tools/emulated-camera.sh run DIR COMMAND...      run COMMAND under pw-v4l2 against that session
#   tools/emulated-camera.sh stop DIR                stop everything started, by process id
#
# The GStreamer source serves one client: once a client has stopped streaming, later clients get
# no frames (OpenCV's V4L2 client too), so restart it with `source` before each program run.
# Every process started here has its standard streams on files, so a caller reading this
# script's output through a pipe sees the end of it. DIR holds the session (runtime dir, process ids, logs). Missing Debian packages are installed
# first (needs root or sudo; apt-get update first).
set -euo pipefail
SCRIPT=emulated-camera
# shellcheck source=lib/daemons.sh
. "$(dirname "$0")/lib/daemons.sh"

PACKAGES="pipewire pipewire-v4l2 wireplumber gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-libav dbus"

usage() { sed -n 2,15p "$0" >&2; exit 64; }

session_env() {
    export XDG_RUNTIME_DIR="$DIR/runtime"
    export DBUS_SESSION_BUS_ADDRESS="unix:path=$DIR/runtime/bus"
    export PIPEWIRE_RUNTIME_DIR="$DIR/runtime"
    # WirePlumber keeps the defaults a person chose here: each session starts without any.
    export XDG_STATE_HOME="$DIR/state"
}

video_sources_present() { [ "$(pw-cli ls Node 2>/dev/null | grep -c 'media.class = "Video/Source"')" -ge "${1:-1}" ]; }

start_source() { # MEDIA [FPS [NAME]]: NAME "second" starts the second camera
    local media="$1" fps="${2:-}" name="${3:-}"
    local pidfile="$DIR/gst.pid" log="$DIR/gst.log" description="DockTrack-emulated-camera" count=1
    if [ "$name" = second ]; then pidfile="$DIR/gst2.pid"; log="$DIR/gst2.log"; description="DockTrack-emulated-camera-2"; count=2
    elif [ -f "$DIR/gst2.pid" ]; then count=2; fi
    [ -r "$media" ] || { echo "emulated-camera: $media: no such file" >&2; exit 66; }
    local rate="" caps="video/x-raw,format=YUY2"
    local input
    case "${media,,}" in
        *.jpg|*.jpeg|*.png|*.bmp)
            input="filesrc location=$media ! decodebin ! imagefreeze"
            caps="$caps,framerate=${fps:-30}/1";;
        *)
            input="filesrc location=$media ! decodebin"
            [ -n "$fps" ] && { rate="! videorate"; caps="$caps,framerate=$fps/1"; };;
    esac
    # shellcheck disable=SC2086
    setsid gst-launch-1.0 -q $input ! videoconvert $rate ! $caps \
        ! pipewiresink mode=provide stream-properties="p,media.class=Video/Source,node.description=$description" \
        </dev/null >"$log" 2>&1 &
    echo $! >"$pidfile"
    wait_for 20 video_sources_present "$count" || { echo "emulated-camera: the video source did not appear (see $log)" >&2; exit 1; }
}

start_daemons() { # dbus, pipewire, wireplumber for the session in $DIR
    install_packages $PACKAGES
    mkdir -p "$DIR/runtime"; chmod 700 "$DIR/runtime"
    session_env
    dbus-daemon --session --address="$DBUS_SESSION_BUS_ADDRESS" --fork --print-pid >"$DIR/dbus.pid" 2>"$DIR/dbus.log" </dev/null
    setsid pipewire </dev/null >"$DIR/pipewire.log" 2>&1 & echo $! >"$DIR/pipewire.pid"
    wait_for 10 test -S "$DIR/runtime/pipewire-0" || { echo "emulated-camera: pipewire did not start (see $DIR/pipewire.log)" >&2; exit 1; }
    setsid wireplumber </dev/null >"$DIR/wireplumber.log" 2>&1 & echo $! >"$DIR/wireplumber.pid"
}

[ $# -ge 2 ] || usage
COMMAND="$1"; DIR="$(mkdir -p "$2" && cd "$2" && pwd)"; shift 2

case "$COMMAND" in
    start)
        [ $# -ge 1 ] || usage
        start_daemons
        sleep 1
        start_source "$@"
        echo "emulated-camera: /dev/video0 plays $1 (run programs with: $0 run $DIR COMMAND...)" >&2
        ;;
    daemons)
        # dbus, pipewire and wireplumber only (no video source): an audio graph to change.
        start_daemons
        wait_for 10 sh -c 'pw-metadata -n default 0 | grep -q Found' || { echo "emulated-camera: wireplumber did not start (see $DIR/wireplumber.log)" >&2; exit 1; }
        echo "emulated-camera: PipeWire runs in $DIR/runtime" >&2
        ;;
    source)
        [ $# -ge 1 ] || usage
        session_env
        stop_pid "$DIR/gst.pid"
        start_source "$@"
        ;;
    second)
        [ $# -ge 1 ] || usage
        session_env
        stop_pid "$DIR/gst2.pid"
        start_source "$1" "${2:-}" second
        echo "emulated-camera: a second camera plays $1" >&2
        ;;
    unplug)
        session_env
        stop_pid "$DIR/gst.pid"
        ;;
    run)
        [ $# -ge 1 ] || usage
        session_env
        exec pw-v4l2 "$@"
        ;;
    stop)
        for name in gst2 gst wireplumber pipewire dbus; do stop_pid "$DIR/$name.pid"; done
        ;;
    *) usage;;
esac
