#!/bin/bash
# One device call (1 GPU, ~7 min): first, the GPU pytest's torch-capture case by its own command
# (tests/gpu/torch_capture.py, every rank on GPU 0, 32 queues: what test_ops_inside_torch_cuda_graphs_on_a_shared_device
# runs and asserts "14 passed, 0 failed" of) - it failed once at 1757Z with its reason cut from the log; then the
# local-GEMM benchmark's e4m3p run (--precise-fp8) under the per-element check, never run so. Carry build/libtpgemm.so
# and build/bench/local_gemm. From the repository root:
#   bash bench/results/experiments/call_torch_capture_e4m3p.sh
OUT=${OUT:-build/torch_capture_e4m3p}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 240 python3 tests/gpu/torch_capture.py > "$R/torch_capture.log" 2>&1
at "torch_capture.py" $?
tail -5 "$R/torch_capture.log" | cut -c1-240
bash "$(dirname "$0")/call_local_method.sh" e4m3p
