#!/bin/bash
# One device call (1 GPU, ~7 min): call_cuda12_paths.sh (each of cuda12.h's two 12.x paths timed alone under nvcc 13),
# then, every rank on the one GPU, the new `trace` group (tests/gpu/trace_case.sh) and the tier-2 quick groups that the
# 1209Z call's budget left unrun (few_rows, stream_k, pull_partials), then the local-GEMM benchmark's new method on its
# three quick problems (bf16). Built here, carried (no build on the device): build/tpgemm build/trace/tpgemm
# build/bench/local_gemm build/selftest/kernel_selftest build/selftest_pb/kernel_selftest
# build/selftest_c12/kernel_selftest. From the repository root:
#   bash bench/results/experiments/call_paths_and_tier2_rest.sh
base=${OUT:-build/paths_and_tier2_rest}
OUT=$base/paths bash "$(dirname "$0")/call_cuda12_paths.sh"
OUT=$base/tier2
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
for g in trace few_rows stream_k pull_partials; do
    OUT=$R/tier2_$g TIER2_GROUPS=$g TIER2_BUDGET_S=150 timeout 200 tests/gpu/run_tier2.sh --tp 2 --share-device \
        --quick > "$R/tier2_$g.log" 2>&1; at "tier 2 quick, shared TP = 2, group $g" $?
    tail -4 "$R/tier2_$g.log"
done
grep -h '"passed": false' "$R"/tier2_*/tier2.records.jsonl | cut -c1-600
timeout 150 build/bench/local_gemm --quick --dtype bf16 --budget-s 110 --out "$R/local_gemm_quick.json" \
    > "$R/local_gemm_quick.log" 2>&1; at "local_gemm --quick --dtype bf16" $?
tail -8 "$R/local_gemm_quick.log"
python3 -c "import json, sys; [print(r['name'], r['config'], r['published'], r['check'], r['max_error'], r['error'])
             for r in json.load(open(sys.argv[1]))]" "$R/local_gemm_quick.json"
cat "$OUT/summary.txt"
