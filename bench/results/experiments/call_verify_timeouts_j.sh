#!/bin/bash
# One device call (1 GPU, ~9 min): the device code of 2026-12-05-j, which no GPU had run - the closing barrier's
# reset of its all-gather stage flags and its tell when it breaks out on a give-up (runtime/src/barrier.cu), every
# timeout marking its launch given up (templates/kernels/sync.cuh). (1) the kernel self-test, every case (carry
# build/selftest/kernel_selftest: `bash tests/gpu/kernel_selftest.sh` here); (2) the GPU pytest's shared-device cases
# (every rank on the GPU: the late peer with --peer-ahead, the few-token timeouts, the torch-capture case whose
# fixture builds build/libtpgemm.so, the rest as before). From the repository root:
#   bash bench/results/experiments/call_verify_timeouts_j.sh
OUT=${OUT:-build/verify_timeouts_j}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
timeout 150 ninja build/tpgemm build/libtpgemm.so tests > "$R/build.log" 2>&1
at build $?
timeout 150 build/selftest/kernel_selftest --no-perf > "$R/selftest.log" 2>&1
at "kernel_selftest --no-perf" $?
tail -3 "$R/selftest.log"
TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32 timeout -s INT -k 10 330 python3 -m pytest -q -rA tests/test_gpu.py \
    -k "shared" > "$R/gpu_pytest_shared.log" 2>&1
at "gpu pytest -k shared" $?
grep -E "^(PASSED|FAILED|ERROR)" "$R/gpu_pytest_shared.log" | cut -c1-160
grep -E "late rank 1 after its call|the call after the late one|device .* access" "$R/gpu_pytest_shared.log" | head -8
tail -3 "$R/gpu_pytest_shared.log"
cat "$OUT/summary.txt"
