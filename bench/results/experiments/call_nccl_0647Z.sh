#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the NCCL transport on one GPU - every rank its own process and its own
# NCCL "host" (gpu_epochs --nccl sets NCCL_HOSTID per rank), NCCL's socket transport over loopback - then the
# peer transport's multi-process and single-process epochs as a regression check.
source "$(dirname "$0")/nccl_call_common.sh"
ninja build/tests/gpu_epochs 2>&1 | tail -2
step nccl_tp2 150 build/tests/gpu_epochs 2 --share-device --processes --nccl
step nccl_tp2_capture 150 build/tests/gpu_epochs 2 --share-device --processes --nccl --capture
step nccl_tp4 180 build/tests/gpu_epochs 4 --share-device --processes --nccl
step peer_tp2_processes 120 build/tests/gpu_epochs 2 --share-device --processes
step peer_tp2 60 build/tests/gpu_epochs 2 --share-device
echo; cat "$OUT/summary.txt"
