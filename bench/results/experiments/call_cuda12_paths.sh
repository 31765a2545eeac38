#!/bin/bash
# One device call (1 GPU, ~2 min): which of templates/kernels/cuda12.h's two 12.x paths costs the ~1% that the CUDA
# 12.4-built "_wide" kernel lost to nvcc 13's (cuda12_selftest_1207Z), each timed alone under nvcc 13: the self-test
# built with -DTPG_CUDA12_PARAM_BASE=1 (the stage's fields by generic loads; build/selftest_pb) and with -DTPG_CUDA12=1
# (the accumulators zeroed before a tile's first wgmma, the epilogue's slab loop by template; build/selftest_c12),
# beside the plain build (build/selftest): the cases of three kernels, then the perf table, builds alternated.
# Built here: NVCC=<a wrapper that adds the -D> SELFTEST_OUT=build/selftest_pb bash tests/gpu/kernel_selftest.sh.
# Carry: build/selftest/kernel_selftest build/selftest_pb/kernel_selftest build/selftest_c12/kernel_selftest.
#   bash bench/results/experiments/call_cuda12_paths.sh
OUT=${OUT:-build/cuda12_paths}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
for b in selftest_pb selftest_c12; do
    timeout 60 "build/$b/kernel_selftest" --no-perf --only wide3,pp128tma,c2x1 > "$R/${b}_cases.log" 2>&1
    at "$b cases" $?; grep -E "ALL PASSED|FAIL" "$R/${b}_cases.log" | head -3
done
for round in 1 2; do
    for b in selftest selftest_pb selftest_c12; do
        timeout 60 "build/$b/kernel_selftest" --no-cases --only wide3,pp128tma >> "$R/${b}_perf.log" 2>&1
        at "$b perf $round" $?
    done
done
for b in selftest selftest_pb selftest_c12; do echo "== $b"; grep -E "geomean" "$R/${b}_perf.log"; done
cat "$OUT/summary.txt"
