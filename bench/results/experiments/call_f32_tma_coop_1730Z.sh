#!/bin/bash
# The instances are in f32_tma_coop_1730Z.patch (apply it to 5b0ac80 / cec7d31; tests/gpu/kernel_selftest.sh builds them).
# One device call (nvidia-h200): fp32 reduce-scatter partials loaded by TMA in a cooperative 128x128 kernel (64
# accumulator rows a warpgroup, stores inside their tile's epilogue; c128p32t), after the ping-pong 64x128 lost to its
# smaller tile (1715Z). Its self-test cases first, then the ring proxy (--rs-perf) against the shipped fp32 kernel
# (pp128p32, plain loads), the same cooperative 128x128 with 16-bit TMA partials (c128tma) and with fp32 plain loads
# (c128p32), the shipped 16-bit default (pp128tma, first: the "vs first" column), then few tokens (--rs-few).
# Carry build/selftest/kernel_selftest.
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
S=build/selftest/kernel_selftest
timeout 120 $S --no-perf --only c128p32t,c128tma,c128p32 > $OUT/cases.log 2>&1; echo "cases rc=$?"
grep -v "\[PASS\]" $OUT/cases.log | tail -4
K=pp128tma,pp128p32,c128tma,c128p32,c128p32t
timeout 300 $S --no-perf --no-cases --rs-perf --only $K > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
timeout 150 $S --no-perf --no-cases --rs-perf --rs-few --only $K \
  --problem 70B-o-m1024,70B-o-m4096,8B-o-m2048,70B-fc2-m2048 > $OUT/rs_few.log 2>&1; echo "rs-few rc=$?"
grep -E "^\| (problem|---|[0-9A-Za-z-]+ [0-9]+x)" $OUT/rs_perf.log | head -20
grep -E "^\| (problem|---|[0-9A-Za-z-]+ [0-9]+x)" $OUT/rs_few.log | head -20
grep -c FAIL $OUT/*.log
