#!/bin/bash
# One device call (1 GPU, <= ~7 min): the 2026-12-06 (16:04Z-) session's second set of fixes, from a review of what
# users pass in: tpg_op_run refusing streams that would run one local rank's launch behind another's on a shared
# device (gpu_epochs --share-device checks both refusals, every schedule; every tpg_op_run now asks each stream's
# flags, so every shared-device case runs the new code), and the tile walk's 32-bit limit (CPU-tested). The GPU
# pytest's shared-device cases, all of them. From the repository root:
#   bash bench/results/experiments/call_session_p.sh
OUT=${OUT:-build/session_p}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
logged "gpu_epochs 2 --share-device" epochs_shared.log 60 "${GPU_ENV[@]}" build/tests/gpu_epochs 2 --share-device
grep -E "one stream|legacy stream|passed" "$R/epochs_shared.log" | sort | uniq -c | cut -c1-220
logged "gpu pytest -k shared" gpu_pytest_shared.log 420 "${GPU_ENV[@]}" python3 -m pytest -q -rA tests/test_gpu.py \
    -k shared
grep -E "^(FAILED|ERROR)|passed|failed" "$R/gpu_pytest_shared.log" | cut -c1-160
cat "$OUT/summary.txt"
