#!/bin/bash
# One device call (1 GPU, <= ~6 min): what the 2026-12-06 (16:04Z-) session changed in the NCCL transport and could
# not run on a GPU: the context's destroy with a captured call's graph still alive (gpu_epochs --capture --nccl keeps
# one; the destroy must return), the bounded wait's abort on any give-up of the running launch (the missing and late
# peers of gpu_multiprocess --nccl), the settings check reading NCCL's config files; then the GPU tests that touch
# NCCL, timeouts and processes. From the repository root:
#   bash bench/results/experiments/call_session_o.sh     (ONLY_NCCL=1: the first pytest step only)
OUT=${OUT:-build/session_o}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
logged "gpu pytest (NCCL on a shared device, captured)" gpu_pytest_nccl.log 200 "${GPU_ENV[@]}" python3 -m pytest \
    -q -rA tests/test_gpu.py -k "nccl_transport and shared_device"
grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|passed|failed|destroy returned|destroy took" "$R/gpu_pytest_nccl.log" |
    cut -c1-160
[ "${ONLY_NCCL:-0}" = 1 ] && { cat "$OUT/summary.txt"; exit 0; } # the rerun after the fix (only NCCL's code changed)
logged "gpu pytest (timeouts, processes, epochs)" gpu_pytest_rest.log 200 "${GPU_ENV[@]}" python3 -m pytest -q -rA \
    tests/test_gpu.py -k "(timeout or process or epochs) and not nccl_transport"
grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$R/gpu_pytest_rest.log" | cut -c1-160
cat "$OUT/summary.txt"
