#!/bin/bash
# One device call (1 GPU, <= ~9.5 min): tier 2 with every rank on the one GPU at TP = 8, 4 and 2 (in that order: the
# shared TP = 8 and 4 records are the oldest, 2026-12-02 and -03, from before the copy-engine partials, the pulled
# partials, the one-hop walk and the stream-K configs), tp1 only in the first step (it is one GPU's runs whatever the
# TP). Each step gets what is left of the call's budget, less 40 s for the next; a step its budget cuts records the
# runs it could not start as failed ("not run"), so the summary says what is left. From the repository root:
#   bash bench/results/experiments/call_tier2_shared.sh [STEP...]
# A STEP is a TP, or TP:GROUP,... for those groups only (the rest of a step an earlier call's budget cut); default
# 8 4 2. The first step alone runs the tp1 group.
OUT=${OUT:-build/tier2_shared}
CALL_BUDGET_S=${CALL_BUDGET_S:-570}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
logged build build.log 240 ninja build/tpgemm
[ $# -gt 0 ] || set -- 8 4 2
skip=""
steps_after=$#
for step in "$@"; do
    tp=${step%%:*} groups=""
    [ "$tp" = "$step" ] || groups=${step#*:}
    steps_after=$((steps_after - 1))
    left=$((CALL_BUDGET_S - ($(date +%s) - t0)))
    [ "$left" -gt 60 ] || { at "tier 2 shared TP = $tp: not started, $left s left" 1; continue; }
    # the last step may spend all that is left; an earlier one leaves 40 s a step after it
    after=$((steps_after * 40))
    # through env: an assignment before `logged` would move its summary line into the step's folder too
    logged "tier 2 shared TP = $tp${groups:+ ($groups)}" "tier2_tp$tp${groups:+_part}.log" "$((left - after))" \
        env TIER2_GROUPS="$groups" TIER2_SKIP_GROUPS="$skip" TIER2_BUDGET_S=$((left - after - 30)) \
        TIER2_HARD_S=$((left - after - 5)) OUT="$R/tp$tp${groups:+_part}" \
        bash tests/gpu/run_tier2.sh --share-device --tp "$tp"
    tail -20 "$R/tier2_tp$tp${groups:+_part}.log"
    cp "$R/tp$tp${groups:+_part}/tier2_shared_tp$tp.json" "$OUT/tier2_shared_tp$tp${groups:+_part}.json" 2>/dev/null
    skip=tp1
done
cat "$OUT/summary.txt"
