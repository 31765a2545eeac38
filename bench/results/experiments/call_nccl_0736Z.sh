#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the NCCL transport with its transfers in pieces (all-gather copy pieces,
# reduce-scatter row bands): the flag kernel, the missing peer, epochs at TP = 2 / 4 (captured) / 8 with every rank its
# own process and NCCL host on one GPU, the peer transport's multi-process test; then the TP smoke with --alt-nccl.
source "$(dirname "$0")/nccl_call_common.sh"
ninja build/tests/gpu_epochs build/tests/gpu_multiprocess build/tests/gpu_transfer_flags build/libtpgemm.so 2>&1 | tail -1
step flags 60 build/tests/gpu_transfer_flags
step mp_nccl 120 build/tests/gpu_multiprocess --share-device --nccl
step mp_peer 120 build/tests/gpu_multiprocess --share-device
step epochs_nccl_tp2 120 build/tests/gpu_epochs 2 --share-device --processes --nccl
step epochs_nccl_tp4_capture 150 build/tests/gpu_epochs 4 --share-device --processes --nccl --capture
step epochs_nccl_tp8 200 build/tests/gpu_epochs 8 --share-device --processes --nccl

t0=$SECONDS
OUT="$OUT/tp" timeout 200 bench/run_tp.sh --tp 2 --share-device --alt-nccl --only 8B-qkv,8B-o,70B-o --rounds 1 \
    --window 0.3 --burst-idle 0 > "$OUT/tp_smoke.log" 2>&1
echo "tp smoke rc=$? $((SECONDS - t0))s: $(grep -E 'check|alt nccl' "$OUT/tp_smoke.log" | tr '\n' ' ' | cut -c1-900)" | tee -a "$OUT/summary.txt"
echo; cat "$OUT/summary.txt"
