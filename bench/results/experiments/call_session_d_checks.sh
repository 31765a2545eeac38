#!/bin/bash
# One device call (1 GPU, ~8 min) for the 2026-12-05 (07:54Z-) session (docs/perf_notes/2026-12-05-d.md): first the
# waiting checks of the session before (call_session_k_checks.sh: build, GPU pytest, tier 2 quick, --model modes),
# then the timeline trace on real kernels: traced calls with every rank on the one GPU (one timer: the writer must not
# shift) and at TP = 1, each checked whole by bench/timeline.py --check. From the repository root:
#   bash bench/results/experiments/call_session_d_checks.sh
OUT=${OUT:-build/session_d}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
OUT=$R/k bash "$(dirname "$0")/call_session_k_checks.sh" > "$R/session_k.log" 2>&1; at "session k checks" $?
cat "$R/k/summary.txt"
trace() { # name, then tpgemm's arguments
    local name=$1; shift
    timeout 120 build/trace/tpgemm "$@" --iterations 5 --trace "$R/trace_$name.json" > "$R/trace_$name.log" 2>&1
    at "trace $name" $?; grep -E "^Trace" "$R/trace_$name.log"
    python3 bench/timeline.py "$R/trace_$name.json" --check > "$R/trace_$name.txt" 2>&1
    at "timeline --check $name" $?; grep -E "^check|aligned" "$R/trace_$name.txt" | head -5
    grep -o '"aligned": "[^"]*"' "$R/trace_$name.json"
}
trace ag_shared --config ag_rota_bf16_tp2 --share-device --m 8192 --n 8192 --k 4096
trace rs_shared --config rs_tila_bf16_tp2 --share-device --m 8192 --n 8192 --k 4096
trace tp1 --config ag_rota_bf16_wide_tp1 --m 4096 --n 4096 --k 4096
cat "$OUT/summary.txt"
