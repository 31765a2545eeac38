#!/bin/bash
# One device call (1 GPU, ~2-3 min): tier 2's trace group with both ranks on the GPU, after bench/timeline_check.py
# got stricter (2026-12-06 11:55Z: a device's spans must be one per record written and one epilogue per tile; no
# tpgemm block or a device without its tiling fails) - the committed traces are all version 1 at TP = 1, so the rule
# is checked here on the writer's current output (version 5: flag waits, partial waits, copy-engine bands, stream-K
# parts, a second traced call past the cap). From the repository root:
#   bash bench/results/experiments/call_trace_check.sh
OUT=${OUT:-build/trace_check}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
logged build build.log 200 ninja build/tpgemm build/trace/tpgemm build/libtpgemm.so
logged "tier 2 trace group, shared device" tier2_trace.log 300 env TIER2_GROUPS=trace OUT="$R/t2" \
    bash tests/gpu/run_tier2.sh --share-device --quick
tail -25 "$R/tier2_trace.log"
cat "$OUT/summary.txt"
