#!/usr/bin/env bash
# x2 call 2 (nvidia-h200-x2, ~550 s): correctness across GPUs - the seed problem with f16 sums, then tier 2 at
# TP = 2 (every group but the one-GPU tp1, memcheck included: bench/results/tier2.json) through tests/gpu/run_all.sh.
# Back in $OUT: summary.txt, tier2.json, records.tgz (run_all's all.tar.gz among them).
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
build
# tier 2's 381 runs at TP = 2 (a stub count, 2026-12-05; 14 under memcheck, last): ~280 s plus memcheck's (1-30 s a
# run); not started with under 30 s left (limit)
if [ "$(limit 600)" = 0 ]; then note "run_all (no time left)" 124; else
    OUT="$R/all" RUN_ALL_BUDGET_S=$(($(budget_left) - 15)) TIER2_STEP_S=470 bash tests/gpu/run_all.sh --tp 2 \
        --skip sanitizers,pytest,local_gemm,tp,tune >"$R/run_all.log" 2>&1
    note run_all $?
fi
cp "$R/all/tier2.json" "$OUT/" 2>/dev/null
tail -25 "$R/run_all.log"
cat "$OUT/summary.txt"
