#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the flag kernel alone; the NCCL transport after the verdict words and the
# wait after the GEMM (missing peer, epochs at TP = 2 / 4 / 8, every rank its own process and NCCL host on one
# GPU); the peer transport's multi-process test as a regression check.
source "$(dirname "$0")/nccl_call_common.sh"
ninja build/tests/gpu_epochs build/tests/gpu_multiprocess build/tests/gpu_transfer_flags 2>&1 | tail -1
step flags 60 build/tests/gpu_transfer_flags
step mp_nccl 120 build/tests/gpu_multiprocess --share-device --nccl
step mp_peer 120 build/tests/gpu_multiprocess --share-device
step epochs_nccl_tp2 120 build/tests/gpu_epochs 2 --share-device --processes --nccl
step epochs_nccl_tp4_capture 150 build/tests/gpu_epochs 4 --share-device --processes --nccl --capture
step epochs_nccl_tp8 200 build/tests/gpu_epochs 8 --share-device --processes --nccl

echo; cat "$OUT/summary.txt"
