#!/bin/bash
# The instances are in f32_tma_coop_1730Z.patch (apply it to 5b0ac80 / cec7d31; tests/gpu/kernel_selftest.sh builds them).
# One device call (nvidia-h200): fp32 reduce-scatter partials loaded by TMA in the ping-pong 64x128 (pp64p32t: the
# 2026-12-01 19:10Z patch's fp32 TMA path, which spilled in the 128x128, fits at 64 rows a tile). First its self-test
# cases (ring cases at 2 and 3 stages with fp32 partials, timeouts, pieces), then the ring proxy (--rs-perf: the local
# ring of each TP = 2 / 4 per-GPU reduce-scatter problem against the same kernel's plain GEMM, interleaved) against
# the shipped fp32 configs' kernels (pp128p32, wide3p32: plain partial loads) and the 16-bit TMA kernels (pp128tma,
# pp64tma), then the same at few tokens (--rs-few). Carry build/selftest/kernel_selftest.
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
S=build/selftest/kernel_selftest
timeout 120 $S --no-perf --only pp64p32t,pp128p32 > $OUT/cases.log 2>&1; echo "cases rc=$?"
grep -v "\[PASS\]" $OUT/cases.log | tail -8
K=pp128tma,pp64tma,pp128p32,wide3p32,pp64p32t
timeout 300 $S --no-perf --no-cases --rs-perf --only $K > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
timeout 150 $S --no-perf --no-cases --rs-perf --rs-few --only pp128tma,pp64tma,pp128p32,pp64p32t \
  --problem 70B-o-m1024,70B-o-m4096,8B-o-m2048,70B-fc2-m2048 > $OUT/rs_few.log 2>&1; echo "rs-few rc=$?"
grep -E "^\|" $OUT/rs_perf.log | head -60
grep -E "^\|" $OUT/rs_few.log | head -60
