#!/bin/bash
# One device call (nvidia-h200, 1 GPU) after a review's fixes: the NCCL config as 2.17's 40 bytes (NCCL's own log:
# the CTA cap), and tests/gpu/run_sanitizers.sh with its budgets, pid groups and record count, under run_all.sh's
# budgets (SAN_BUDGET_S=120 SAN_HARD_S=165).
source "$(dirname "$0")/nccl_call_common.sh"
export PATH="$PATH:/usr/local/cuda/bin"
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV step nccl_config40_tp2 120 build/tests/gpu_epochs 2 --share-device --processes --nccl
grep -h 'Comm config\|p2p channels' "$OUT/nccl_config40_tp2.log" | sort | uniq -c | tee "$OUT/nccl_config40_grep.txt"
rm -f "$OUT/nccl_config40_tp2.log"
OUT=/tmp/san SAN_BUDGET_S=120 SAN_HARD_S=165 timeout 180 bash tests/gpu/run_sanitizers.sh --share-device > "$OUT/sanitizers.log" 2>&1
echo "sanitizers rc=$?" >> "$OUT/sanitizers.log"
cp /tmp/san/sanitizers.json "$OUT/" 2>/dev/null
cat "$OUT/summary.txt"; tail -9 "$OUT/sanitizers.log"
