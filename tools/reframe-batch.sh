#!/usr/bin/env bash
# One file of a batch of `docktrack reframe` runs: the Nth line of a manifest (one input path per
# line), for a Kubernetes Indexed Job, a Slurm job array or a plain loop.
#
#   tools/reframe-batch.sh MANIFEST OUTDIR [INDEX]
#
# INDEX (0-based) defaults to $JOB_COMPLETION_INDEX (Kubernetes), then $SLURM_ARRAY_TASK_ID
# (Slurm). The input's reframed video goes to OUTDIR/NAME.reframed.mp4 and one JSON line to
# OUTDIR/NAME.json, NAME being the input's file name without its extension and a checksum of its
# path (two talk.mp4 in two folders are two outputs): reframe's summary ({"input":...,"status":"ok",...}) or
# {"input":...,"status":"failed","exit":N,"error":"..."}. A file whose JSON line says "ok" is not
# done again, so a batch is resumed by running it again. Extra reframe options come from
# $REFRAME_ARGS (e.g. "--aspect 9:16"); the docktrack binary from $DOCKTRACK (default: docktrack
# on PATH, else .build/release/docktrack). The exit status is reframe's (0 for a file already done).
set -uo pipefail

# Text as the inside of a JSON string: one line, backslashes and quotes escaped, controls dropped.
json_text() { tr '\n\r\t' '   ' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/[[:cntrl:]]//g' -e 's/ *$//'; }

[ $# -ge 2 ] || { sed -n 2,13p "$0" >&2; exit 64; }
MANIFEST="$1"; OUTDIR="$2"
INDEX="${3:-${JOB_COMPLETION_INDEX:-${SLURM_ARRAY_TASK_ID:-}}}"
[ -n "$INDEX" ] || { echo "reframe-batch: no index (give one, or set JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)" >&2; exit 64; }
[[ "$INDEX" =~ ^[0-9]+$ ]] || { echo "reframe-batch: index '$INDEX' is not a number" >&2; exit 64; }
[ -r "$MANIFEST" ] || { echo "reframe-batch: $MANIFEST: cannot read the manifest" >&2; exit 66; }
INPUT=$(sed -n "$((INDEX + 1))p" "$MANIFEST")
[ -n "$INPUT" ] || { echo "reframe-batch: $MANIFEST has no line $((INDEX + 1))" >&2; exit 65; }
DOCKTRACK="${DOCKTRACK:-$(command -v docktrack || echo "$(dirname "$0")/../.build/release/docktrack")}"
mkdir -p "$OUTDIR"
NAME="$(basename "${INPUT%.*}")-$(printf '%s' "$INPUT" | cksum | cut -d' ' -f1)"
RESULT="$OUTDIR/$NAME.json"
if [ -f "$RESULT" ] && grep -q '"status":"ok"' "$RESULT"; then
    echo "reframe-batch: $INPUT: done before ($RESULT)" >&2
    exit 0
fi
ERRORS=$(mktemp)
# shellcheck disable=SC2086
"$DOCKTRACK" reframe "$INPUT" "$OUTDIR/$NAME.reframed.mp4" ${REFRAME_ARGS:-} >"$RESULT.part" 2>"$ERRORS"
STATUS=$?
if [ $STATUS -eq 0 ] && tail -n 1 "$RESULT.part" | grep -q '"status":"ok"'; then
    tail -n 1 "$RESULT.part" >"$RESULT"
else
    [ $STATUS -eq 0 ] && STATUS=70
    printf '{"input":"%s","status":"failed","exit":%d,"error":"%s"}\n' "$(json_text <<<"$INPUT")" "$STATUS" \
        "$(tail -c 500 "$ERRORS" | json_text)" >"$RESULT"
fi
rm -f "$RESULT.part" "$ERRORS"
cat "$RESULT"
exit $STATUS
