#!/bin/bash
# One device call (1 GPU, ~6 min): the Python side after the ctypes review (5791b6d: Op.set_torch_tensors checks and
# holds torch tensors; callback errors raised again; cleanup on error paths), where torch is: the CPU tests that need
# torch (tp_bench's collectives under gloo, tpgemm_lib's), the GPU pytest's torch-graph case
# (tests/gpu/torch_capture.py) and a smoke run of the TP benchmark's multi-process path with every rank on the GPU
# (bench/run_tp.sh --share-device: set_torch_tensors on every variant, captured and copy-engine twins included). From
# the repository root:
#   bash bench/results/experiments/call_ctypes_check.sh
OUT=${OUT:-build/ctypes_check}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
# (as run at 02:26Z the steps were spelled out and the CPU tests had 170 s, too few on an H100: 73 of 129 in time)
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
logged build build.log 120 ninja build/tpgemm build/libtpgemm.so
logged "pytest (torch on the CPU)" cpu_torch_pytest.log 330 python3 -m pytest -q -rs tests/test_tpgemm_lib.py \
    tests/test_tp_bench.py tests/test_tp_bench_collectives.py tests/test_multiprocess.py tests/test_tp_check.py
tail -3 "$R/cpu_torch_pytest.log"
logged "gpu pytest -k torch" gpu_pytest_torch.log 90 "${GPU_ENV[@]}" python3 -m pytest -q -rA tests/test_gpu.py -k torch
grep -E "^(PASSED|FAILED|ERROR)" "$R/gpu_pytest_torch.log" | cut -c1-160
logged "run_tp.sh --share-device (8B-qkv, 8B-o; captured, copy-engine twins)" tp_smoke.log 170 \
    env CUDA_DEVICE_MAX_CONNECTIONS=32 OUT="$R/tp" bash bench/run_tp.sh --tp 2 --share-device --only 8B-qkv,8B-o \
    --rounds 1 --window 0.2 --alt-captured --alt-copy-engine-partials
tail -12 "$R/tp_smoke.log" | cut -c1-200
cat "$OUT/summary.txt"
