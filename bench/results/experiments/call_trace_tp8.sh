#!/bin/bash
# One device call (1 GPU, ~1.5 min): tier 2's `trace` group with all eight ranks on the one GPU after its copies-in-
# pieces case moved to TP = 4 there (run_tier2.sh: PIECES_TP), and the normal build's copy-engine rings (ce_partials.c
# now calls the trace hook, a no-op there) at TP = 2, 4 and 8 with every rank on the GPU, checked. Carry
# build/tpgemm and build/trace/tpgemm. From the repository root:
#   bash bench/results/experiments/call_trace_tp8.sh
OUT=${OUT:-build/trace_tp8}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
OUT=$R/tier2_trace_8 TIER2_GROUPS=trace TIER2_BUDGET_S=80 timeout 130 tests/gpu/run_tier2.sh --tp 8 --share-device \
    --quick > "$R/tier2_trace_8.log" 2>&1; at "tier 2 quick, shared TP = 8, group trace" $?
grep -E "^(PASS|FAIL)|run_tier2.sh:" "$R/tier2_trace_8.log" | cut -c1-150
for tp in 2 4 8; do
    for cfg in rs_tila_bf16_ce rs_tilb_bf16_wide_ce; do
        CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 60 build/tpgemm --config "${cfg}_tp$tp" --share-device --m 4096 \
            --n 4096 --k 8192 --alpha 0.5 --beta 1 --l 2 --iterations 10 --timeout-ms 5000 > "$R/${cfg}_tp$tp.log" 2>&1
        at "normal build ${cfg}_tp$tp" $?
        grep -iE "check|error" "$R/${cfg}_tp$tp.log" | head -2 | cut -c1-150
    done
done
cat "$OUT/summary.txt"
