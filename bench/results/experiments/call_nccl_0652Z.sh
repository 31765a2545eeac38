#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the NCCL transport's missing peer (the communicator's abort) and epochs at
# TP = 2 / 4 / 8 with every rank its own process and NCCL host on one GPU; the peer transport's multi-process test
# and tier 2 (shared, TP = 2) as regression checks.
source "$(dirname "$0")/nccl_call_common.sh"
ninja build/tests/gpu_epochs build/tests/gpu_multiprocess 2>&1 | tail -1
step mp_nccl 120 build/tests/gpu_multiprocess --share-device --nccl
step mp_peer 120 build/tests/gpu_multiprocess --share-device
step epochs_nccl_tp2 120 build/tests/gpu_epochs 2 --share-device --processes --nccl
step epochs_nccl_tp4_capture 150 build/tests/gpu_epochs 4 --share-device --processes --nccl --capture
step epochs_nccl_tp8 200 build/tests/gpu_epochs 8 --share-device --processes --nccl
left=$(( 560 - SECONDS ))
[ $left -gt 150 ] && TIER2_HARD_S=$((left - 20)) timeout $((left - 10)) tests/gpu/run_tier2.sh --tp 2 --share-device > "$OUT/tier2_shared_tp2.log" 2>&1
echo "tier2 rc=$? $(tail -3 "$OUT/tier2_shared_tp2.log" | tr '\n' ' ')" | tee -a "$OUT/summary.txt"
echo; cat "$OUT/summary.txt"
