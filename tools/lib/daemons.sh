# Shared by the scripts that start services for the tests (tools/emulated-camera.sh,
# tools/slurm-local.sh). Source it; set SCRIPT (the name messages start with) first.

# install_packages PACKAGE...: installs those missing (root, or sudo), after apt-get update.
install_packages() {
    local missing=""
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    [ -z "$missing" ] && return 0
    echo "$SCRIPT: installing$missing" >&2
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -q >&2
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds, or 1 when SECONDS have passed.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -ge $deadline ] && return 1
        sleep 0.2
    done
}

# stop_pid FILE: stops the process whose id FILE holds (TERM, then KILL after 5 s) and removes FILE.
stop_pid() {
    [ -f "$1" ] || return 0
    local pid; pid=$(cat "$1")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$1"
}
