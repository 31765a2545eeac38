#!/bin/bash
# One device call (1 GPU, <= ~8 min): what the 2026-12-06 (03:28Z-) session changed and could not run on a GPU: the
# NCCL transport's wait aborting for another op's timed-out launch (gpu_multiprocess step 4b, shared memory and NCCL
# on one GPU), the multi-process destroy after a broken exchange, then the rest of the GPU tests that touch the
# NCCL wait, timeouts and processes. From the repository root:
#   bash bench/results/experiments/call_session_n.sh
OUT=${OUT:-build/session_n}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
logged "gpu pytest (step 4b: shared memory, NCCL)" gpu_pytest_4b.log 150 "${GPU_ENV[@]}" python3 -m pytest -q -rA \
    tests/test_gpu.py -k "test_processes_on_a_shared_device or nccl_transport_missing_peer_on_a_shared_device"
grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|passed|failed" "$R/gpu_pytest_4b.log" | cut -c1-160
logged "gpu_multiprocess --tp 2 --share-device" mp_shm.log 90 env CUDA_DEVICE_MAX_CONNECTIONS=32 \
    build/tests/gpu_multiprocess --tp 2 --share-device
logged "gpu_multiprocess --share-device --nccl" mp_nccl.log 90 env CUDA_DEVICE_MAX_CONNECTIONS=32 \
    build/tests/gpu_multiprocess --share-device --nccl
grep -hE "queued behind|missing peer|late peer|PASSED|FAIL" "$R/mp_shm.log" "$R/mp_nccl.log" | cut -c1-200
logged "gpu pytest (timeouts, processes, NCCL)" gpu_pytest_rest.log 240 "${GPU_ENV[@]}" python3 -m pytest -q -rA \
    tests/test_gpu.py -k "timeout or process or nccl or epochs or pdl"
grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$R/gpu_pytest_rest.log" | cut -c1-160
cat "$OUT/summary.txt"
