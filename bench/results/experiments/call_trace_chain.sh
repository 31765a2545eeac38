#!/bin/bash
# One device call (1 GPU, ~3 min): tier 2's `trace` group with every rank on the one GPU at TP = 2, 4 (twice) and 8,
# after the event nodes became one chain (trace_events.c: as leaves, TP = 4's copies in 4 pieces timed out at
# the barrier, and an event recorded late put a copy before its flag's dependency) and each node's end the earliest
# of its own event and its timed dependents' (tighten_ends). Carry build/tpgemm and build/trace/tpgemm. From the root:
#   bash bench/results/experiments/call_trace_chain.sh
OUT=${OUT:-build/trace_chain}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
for run in 2 4 4b 8; do
    tp=${run%b}
    OUT=$R/tier2_trace_$run TIER2_GROUPS=trace TIER2_BUDGET_S=80 timeout 130 tests/gpu/run_tier2.sh --tp "$tp" \
        --share-device --quick > "$R/tier2_trace_$run.log" 2>&1; at "tier 2 quick, shared TP = $tp ($run), group trace" $?
    grep -E "^(PASS|FAIL)" "$R/tier2_trace_$run.log" | cut -c1-150
    python3 - "$R/tier2_trace_$run/tier2.records.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    tail = d.get("stderr_tail") or ""
    timed = [l.strip() for l in tail.splitlines() if "(CUDA events" in l]
    print(f"  {d['label']}: {'pass' if d['passed'] else 'FAIL ' + (d.get('reason') or '')[:160]}")
    for l in timed[:12]:
        print("     ", l[:150])
PY
done
cat "$OUT/summary.txt"
