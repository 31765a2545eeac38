#!/bin/bash
# One device call (1 GPU, ~2 min), after call_cuda12_selftest.sh in the same run: compute-sanitizer's memcheck over two
# CUDA 12.4-built instances of the mixed self-test (tests/gpu/nvcc_cuda12.sh), the 2x1 cluster and the shipped "_wide"
# kernel, whose first TMA faulted ("misaligned address") before templates/kernels/cuda12.h's tpg_stage.
# Carry: build/selftest124/kernel_selftest.
#   bash bench/results/experiments/call_cuda12_sanitize.sh
OUT=${OUT:-build/cuda12_sanitize}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
for k in c2x1 wide3; do
    timeout 100 compute-sanitizer --tool memcheck --print-limit 4 "build/selftest124/kernel_selftest" --no-perf \
        --only "$k" > "$R/memcheck_$k.log" 2>&1
    at "memcheck $k" $?; grep -m8 -E "Invalid|misaligned|at 0x|ERROR SUMMARY|ALL PASSED|FAIL" "$R/memcheck_$k.log"
done
cat "$OUT/summary.txt"
