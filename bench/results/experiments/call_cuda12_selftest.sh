#!/bin/bash
# One device call (1 GPU, ~5 min): the kernel self-test with every GEMM instance's device code from CUDA 12.4's NVRTC
# and ptxas (templates/kernels/cuda12.h's code paths; built on the CPU machine by tests/gpu/nvcc_cuda12.sh, carried as
# build/selftest124) beside the nvcc 13 build (carried as build/selftest): the cases of the shipped kernels' twins,
# then the same perf table, alternating builds. Carry: build/selftest/kernel_selftest build/selftest124/kernel_selftest.
#   bash bench/results/experiments/call_cuda12_selftest.sh
OUT=${OUT:-build/cuda12_selftest}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
KS=wide3,wide3tma,fp16w,fp16tma,pp128tma,pp64tma,w160,c2x1,e4m3w,e4m3pp,e4m3tma,e4m3p8,e4m3p8tma,pp128p32,wide3p32
ldd build/selftest124/kernel_selftest > "$R/ldd.txt" 2>&1; at "ldd" $?
for b in selftest124 selftest; do
    timeout 200 "build/$b/kernel_selftest" --no-perf --only "$KS" > "$R/${b}_cases.log" 2>&1
    at "$b cases" $?; grep -cE "^\[PASS\]" "$R/${b}_cases.log"; grep -E "^\[FAIL\]" "$R/${b}_cases.log" | head -5
done
for b in selftest124 selftest selftest124 selftest; do # perf, alternating
    timeout 100 "build/$b/kernel_selftest" --no-cases --only wide3,pp128tma,e4m3w,e4m3p8 >> "$R/${b}_perf.log" 2>&1
    at "$b perf" $?
done
for b in selftest124 selftest; do echo "== $b"; grep -E "^\|" "$R/${b}_perf.log" | head -40; done
cat "$OUT/summary.txt"
