#!/bin/bash
# One device call (1 GPU, ~3 min): the trace build's nodes timed by CUDA events (runtime/src/trace_events.c, JSON
# version 4) on a GPU for the first time, every rank on the one GPU: tier 2's `trace` group (whose all-gather and
# one-hop cases now expect the copies, flags and REDUCE timed), then two traced calls whose summaries put the timed
# copy and flag beside the flag waits (a copy's end must come before the first CTA saw its flag) and the REDUCE after
# the GEMM. Carry build/tpgemm and build/trace/tpgemm (built here). From the repository root:
#   bash bench/results/experiments/call_trace_events.sh
OUT=${OUT:-build/trace_events}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
OUT=$R/tier2_trace TIER2_GROUPS=trace TIER2_BUDGET_S=150 timeout 210 tests/gpu/run_tier2.sh --tp 2 --share-device \
    --quick > "$R/tier2_trace.log" 2>&1; at "tier 2 quick, shared TP = 2, group trace" $?
tail -4 "$R/tier2_trace.log"
grep -h '"passed": false' "$R/tier2_trace/tier2.records.jsonl" | cut -c1-900
traced() { # NAME TPGEMM-ARGS...
    local name=$1; shift
    timeout 120 build/trace/tpgemm --share-device --tp 2 --iterations 20 "$@" --trace "$R/$name.json" \
        > "$R/$name.log" 2>&1; at "traced $name" $?
    python3 bench/timeline.py "$R/$name.json" --check > "$R/$name.summary" 2>&1; at "timeline $name" $?
    grep -E "rank|kernel|flag waits|copy|flag stage|REDUCE|barrier|check:" "$R/$name.summary" | cut -c1-160
    rm -f "$R/$name.json"
}
traced ag_70b_qkv --config ag_rota_bf16_wide_tp2 --m 16384 --n 10240 --k 8192 --copy-chunks 4
traced rs_one_hop --config rs_tila_bf16_sk64_tp2 --m 32 --n 5120 --k 16384
cat "$OUT/summary.txt"
