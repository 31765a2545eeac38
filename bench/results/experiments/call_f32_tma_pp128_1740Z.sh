#!/bin/bash
# The instances are in f32_tma_coop_1730Z.patch (apply it to 5b0ac80 / cec7d31; tests/gpu/kernel_selftest.sh builds them).
# One device call (nvidia-h200): the ping-pong 128x128 with fp32 partials by TMA (pp128p32t: 3 stages, 8 store buffers a
# warpgroup, 12 bytes spilled) against the shipped fp32 kernel (pp128p32), the shipped 16-bit one (pp128tma, first) and
# the 16-bit one with the same 3 stages and 8 buffers (pp128t3), and the cooperative 128x128 fp32 TMA (c128p32t, 1730Z).
# Self-test cases of the two new instances first. Carry build/selftest/kernel_selftest.
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
S=build/selftest/kernel_selftest
timeout 120 $S --no-perf --only pp128p32t,pp128t3 > $OUT/cases.log 2>&1; echo "cases rc=$?"
grep -v "\[PASS\]" $OUT/cases.log | tail -4
K=pp128tma,pp128p32,pp128p32t,pp128t3,c128p32t
timeout 300 $S --no-perf --no-cases --rs-perf --only $K > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
timeout 150 $S --no-perf --no-cases --rs-perf --rs-few --only $K \
  --problem 70B-o-m1024,70B-o-m4096,8B-o-m2048,70B-fc2-m2048 > $OUT/rs_few.log 2>&1; echo "rs-few rc=$?"
grep -E "^\| (problem|---|[0-9A-Za-z-]+ [0-9]+x)" $OUT/rs_perf.log | head -20
grep -E "^\| (problem|---|[0-9A-Za-z-]+ [0-9]+x)" $OUT/rs_few.log | head -20
grep -c FAIL $OUT/*.log
