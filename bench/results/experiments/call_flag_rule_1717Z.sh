#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the cooperative kernels' signal flags deferred only where a stage spans two
# rounds of the grid (tpg_epi_defers_flags, new): wide3tma (the rule) against wide3old (always deferred, the rule
# before), wide3nd (never) and pp128tma. Self-test cases of wide3tma and wide3old, the ring proxy on the anchors twice
# (the 17:12Z run showed 2-4% between identical plain GEMMs), then at 128-8192 tokens.
export PATH="$PATH:/usr/local/cuda/bin"
KS=wide3tma,wide3old,wide3nd,pp128tma
build/selftest/kernel_selftest --no-perf --only wide3tma,wide3old > $OUT/cases_1717Z.log 2>&1; echo "rc=$?" >> $OUT/cases_1717Z.log
for r in 1 2; do build/selftest/kernel_selftest --no-perf --no-cases --rs-perf --only $KS > $OUT/rs_anchors_${r}_1717Z.log 2>&1; done
build/selftest/kernel_selftest --no-perf --no-cases --rs-few --only $KS > $OUT/rs_few_1717Z.log 2>&1
tail -2 $OUT/cases_1717Z.log; for r in 1 2; do grep -E "^\| [0-9]+B-" $OUT/rs_anchors_${r}_1717Z.log; done
grep -E "^\| [0-9]+B-[a-z0-9]+-m" $OUT/rs_few_1717Z.log | grep -v "m128 \|m256 "
