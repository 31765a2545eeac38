#!/bin/bash
# One device call (1 GPU, ~4 min): the copy-engine partials' chains timed by CUDA events in the trace build
# (tpg__trace_chain_event, ce_partials.c: an event after each band's wait, copy and flag copy), every rank on the one
# GPU: tier 2's `trace` group at TP = 2 and 4 (its new case expects "partial copy stage 0" and "partial flags stage 0"
# on every rank), then 70B-o's copy-engine ring traced at TP = 2 (16 bands a stage) beside its push twin, summaries
# only. Carry build/tpgemm and build/trace/tpgemm (built here). From the repository root:
#   bash bench/results/experiments/call_trace_ce.sh
OUT=${OUT:-build/trace_ce}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
for tp in 2 4; do
    OUT=$R/tier2_trace_tp$tp TIER2_GROUPS=trace TIER2_BUDGET_S=100 timeout 150 tests/gpu/run_tier2.sh --tp $tp \
        --share-device --quick > "$R/tier2_trace_tp$tp.log" 2>&1; at "tier 2 quick, shared TP = $tp, group trace" $?
    tail -3 "$R/tier2_trace_tp$tp.log"
    grep -h '"passed": false' "$R/tier2_trace_tp$tp/tier2.records.jsonl" | cut -c1-900
done
traced() { # NAME TPGEMM-ARGS...
    local name=$1; shift
    CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 120 build/trace/tpgemm --share-device --tp 2 --iterations 20 "$@" \
        --trace "$R/$name.json" > "$R/$name.log" 2>&1; at "traced $name" $?
    python3 bench/timeline.py "$R/$name.json" --check > "$R/$name.summary" 2>&1; at "timeline $name" $?
    grep -E "rank|kernel|partial|copy|flag stage|barrier|check:" "$R/$name.summary" | cut -c1-160
    rm -f "$R/$name.json"
}
traced rs_70b_o_ce --config rs_tila_bf16_wide_ce_tp2 --m 16384 --n 8192 --k 8192
traced rs_70b_o_push --config rs_tila_bf16_wide_tp2 --m 16384 --n 8192 --k 8192
cat "$OUT/summary.txt"
