#!/bin/bash
# One device call (1 GPU, ~7 min), most wanted first: every rank on the one GPU, the new tier-2 `trace` group
# (tests/gpu/trace_case.sh); the local-GEMM benchmark's new method on its three quick problems (bf16);
# call_cuda12_paths.sh (each of cuda12.h's two 12.x paths timed alone under nvcc 13); then the tier-2 quick groups that
# the 1209Z call's budget left unrun (few_rows, stream_k, pull_partials). Built here, carried (no build on the device):
# build/tpgemm build/trace/tpgemm build/bench/local_gemm build/selftest/kernel_selftest
# build/selftest_pb/kernel_selftest build/selftest_c12/kernel_selftest. From the repository root:
#   bash bench/results/experiments/call_paths_and_tier2_rest.sh
base=${OUT:-build/paths_and_tier2_rest}
OUT=$base/main
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
tier2() { # GROUP BUDGET_S
    OUT=$R/tier2_$1 TIER2_GROUPS=$1 TIER2_BUDGET_S=$2 timeout $(($2 + 60)) tests/gpu/run_tier2.sh --tp 2 \
        --share-device --quick > "$R/tier2_$1.log" 2>&1; at "tier 2 quick, shared TP = 2, group $1" $?
    tail -4 "$R/tier2_$1.log"
    grep -h '"passed": false' "$R/tier2_$1/tier2.records.jsonl" | cut -c1-700
}
tier2 trace 120
timeout 150 build/bench/local_gemm --quick --dtype bf16 --budget-s 110 --out "$R/local_gemm_quick.json" \
    > "$R/local_gemm_quick.log" 2>&1; at "local_gemm --quick --dtype bf16" $?
tail -8 "$R/local_gemm_quick.log"
python3 -c "import json, sys; [print(r['name'], r['config'], r['published'], r['check'], r['max_error'],
            r['late_windows'], r['error']) for r in json.load(open(sys.argv[1]))]" "$R/local_gemm_quick.json"
OUT=$base/paths bash "$(dirname "$0")/call_cuda12_paths.sh"
for g in few_rows stream_k pull_partials; do tier2 $g 100; done
cat "$OUT/summary.txt"
