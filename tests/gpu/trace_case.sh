#!/bin/bash
# One tier-2 "trace" run (run_tier2.sh): build/trace/tpgemm ARGS --trace FILE, then bench/timeline.py FILE --check
# (every CTA, record and tile of the call in the timeline: bench/timeline_check.py), plus what the case expects:
#   tests/gpu/trace_case.sh [--expect-stream-k] [--expect-retrace] [--expect-timed NAME]... TPGEMM-ARGS...
#   --expect-stream-k  the timeline labels stream-K contributions and finishers (trace version 3)
#   --expect-retrace   a lane's walk passed the default cap, so the call was traced again with a larger one
#   --expect-timed N   the summary has a line "N ... (CUDA events)": a node beside the GEMM timed by CUDA events
#                      (runtime/src/trace_events.c), e.g. "copy stage 1", "flag stage 1", "REDUCE"
# stdout is tpgemm's (its --json line for tier2_collect.py); what the checks say goes to stderr. Exit: tpgemm's
# status if it failed, else 1 if a check failed, else 0. The trace JSON is removed afterwards (it can be ~50 MB).
set -u
cd "$(dirname "$0")/../.."
SK=0 RETRACE=0 TIMED=()
while [ $# -gt 0 ]; do
    case "$1" in
    --expect-stream-k) SK=1; shift ;;
    --expect-retrace) RETRACE=1; shift ;;
    --expect-timed)
        if [ $# -lt 2 ] || [ "${2#--}" != "$2" ]; then
            echo "trace_case: --expect-timed needs a node's summary name, e.g. \"copy stage 1\"" >&2
            exit 2
        fi
        TIMED+=("$2"); shift 2 ;;
    *) break ;;
    esac
done
[ -x build/trace/tpgemm ] || { echo "trace_case: build/trace/tpgemm is missing (ninja trace)" >&2; exit 127; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tpg_trace.XXXXXX") || exit 5
trap 'rm -rf "$work"' EXIT
build/trace/tpgemm "$@" --trace "$work/t.json" >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
cat "$work/err" >&2
[ "$rc" = 0 ] || exit "$rc"
fail=0
python3 bench/timeline.py "$work/t.json" --check >"$work/summary" 2>&1 || fail=1
cat "$work/summary" >&2
# the CLI says it on stdout, or on stderr with --json (which run_tier2.sh's one() passes)
if [ "$RETRACE" = 1 ] && ! cat "$work/out" "$work/err" | grep -q "traced again with --trace-cap"; then
    echo "trace_case: expected a second traced call with a larger cap (a lane past 512 records)" >&2
    fail=1
fi
if [ "$SK" = 1 ] && ! grep -qE "[1-9][0-9]* stream-K contributions, [1-9][0-9]* finishers" "$work/summary"; then
    echo "trace_case: expected stream-K contributions and finishers in the timeline" >&2
    fail=1
fi
# every rank's section of the summary has the line "  NAME (CUDA events): a .. b us" (the name whole: "copy stage 1"
# is not "copy stage 10"), and no node was placed before its dependency's end
ranks=$(grep -c "^rank [0-9]* (cuda" "$work/summary")
if [ ${#TIMED[@]} != 0 ] && [ "$ranks" = 0 ]; then  # else every count below compares 0 with 0
    echo "trace_case: expected CUDA-event sections in the summary, found no rank's" >&2
    fail=1
fi
for name in ${TIMED[@]+"${TIMED[@]}"}; do
    have=$(grep -cF "  $name (CUDA events): " "$work/summary")
    if [ "$have" != "$ranks" ]; then
        echo "trace_case: expected '$name' timed by CUDA events on each of the $ranks rank(s), found $have" >&2
        fail=1
    fi
done
if [ ${#TIMED[@]} != 0 ] && grep -q "placed before its dependency" "$work/summary"; then
    echo "trace_case: a timed node was placed before its dependency's end (the anchors' latency)" >&2
    fail=1
fi
exit "$fail"
