#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the self-test's deferred-flag rings on 16 CTAs (1100 x 1200, replacing the
# 8192 x 4096 rings that made the sanitizers' rings group run out of its budget at 19:40Z), then the sanitizers as
# run_all.sh runs them (STEP_BUDGET_S=180, both ranks on one GPU).
export PATH="$PATH:/usr/local/cuda/bin"
timeout 40 build/selftest/kernel_selftest --no-perf --only wide3tma,pp128df,wide3old,c2x1,pp64tma > $OUT/cases.log 2>&1
echo "rc=$?" >> $OUT/cases.log
mkdir -p $OUT/san
OUT=$OUT/san STEP_BUDGET_S=180 timeout 180 bash tests/gpu/run_sanitizers.sh --tp 2 --share-device > $OUT/sanitizers.log 2>&1
echo "sanitizers rc=$?" >> $OUT/sanitizers.log
cp $OUT/san/sanitizers.json $OUT/ 2>/dev/null; rm -rf $OUT/san
grep -E "CTAs" $OUT/cases.log | grep -c PASS; grep -E "CTAs" $OUT/cases.log | grep -v PASS | head; tail -2 $OUT/cases.log
grep -E "rings" $OUT/sanitizers.log | head -12; grep -A6 "^group" $OUT/sanitizers.log; tail -1 $OUT/sanitizers.log
