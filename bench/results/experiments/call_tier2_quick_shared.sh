#!/bin/bash
# One device call (1 GPU, ~8 min): tier 2's quick groups with every rank on the one GPU, with the budget they need
# there (the 100 s of call_session_k_checks.sh ran 90 of ~400 runs on an H100, 2026-12-05 10:04Z). Records tarred into
# $OUT/records.tgz, the results file (tier2_shared_tp2_quick.json) among them. From the repository root:
#   bash bench/results/experiments/call_tier2_quick_shared.sh
OUT=${OUT:-build/tier2_quick_shared}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
ninja > "$R/build.log" 2>&1; at build $?
left=$((${CALL_BUDGET_S:-560} - ($(date +%s) - t0) - 40))
OUT=$R/tier2 TIER2_BUDGET_S=$left timeout $((left + 60)) tests/gpu/run_tier2.sh --tp 2 --share-device --quick \
    > "$R/tier2_quick.log" 2>&1; at "tier 2 quick, shared TP = 2 (budget ${left} s)" $?; tail -12 "$R/tier2_quick.log"
cat "$OUT/summary.txt"
