#!/bin/bash
# One device call (nvidia-h200, 1 GPU): does the wide kernel's deferred signal flag cost its reduce-scatter ring?
# wide3nd = wide3tma built with TPG_DIAG_NO_DEFER_FLAGS=1 (every tile raises its flag at once), beside wide3tma and
# pp128tma: the self-test cases of wide3nd, the ring proxy on the anchors (--rs-perf), then at 128-8192 tokens (--rs-few).
export PATH="$PATH:/usr/local/cuda/bin"
build/selftest/kernel_selftest --no-perf --only wide3nd > $OUT/cases_wide3nd_1712Z.log 2>&1; echo "rc=$?" >> $OUT/cases_wide3nd_1712Z.log
build/selftest/kernel_selftest --no-perf --no-cases --rs-perf --only wide3tma,wide3nd,pp128tma > $OUT/rs_anchors_1712Z.log 2>&1
build/selftest/kernel_selftest --no-perf --no-cases --rs-few --only wide3tma,wide3nd,pp128tma > $OUT/rs_few_nd_1712Z.log 2>&1
tail -3 $OUT/cases_wide3nd_1712Z.log; tail -12 $OUT/rs_anchors_1712Z.log; grep -E "^\| (70B-fc2|405B-fc2)-m" $OUT/rs_few_nd_1712Z.log
