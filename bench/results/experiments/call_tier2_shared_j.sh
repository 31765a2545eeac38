#!/bin/bash
# One device call (1 GPU, ~5 min, right after call_verify_timeouts_j.sh on the warm machine): tier 2 with every rank
# on the GPU at TP = 2, every group (the closing barrier's flag reset and tells, every timeout marking its launch:
# 2026-12-05-j). From the repository root:
#   bash bench/results/experiments/call_tier2_shared_j.sh
# On an H100 the 380 s budget covered the groups through copy_chunks (22:49Z); the rest then ran in a second call:
#   TIER2_GROUPS=overlap_barriers,gathered,one_hop,pull_partials,few_rows,stream_k,trace bash <this script>
OUT=${OUT:-build/tier2_shared_j}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
timeout 150 ninja build/tpgemm build/libtpgemm.so tests > "$R/build.log" 2>&1
at build $?
OUT=$R/t2 STEP_BUDGET_S=420 timeout 430 bash tests/gpu/run_tier2.sh --tp 2 --share-device > "$R/tier2.log" 2>&1
at "tier2 --tp 2 --share-device" $?
cp "$R/t2/tier2_shared_tp2.json" "$OUT/" 2>/dev/null
grep -A16 "^group" "$R/tier2.log" | tail -16
tail -2 "$R/tier2.log"
cat "$OUT/summary.txt"
