#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the flag rule's final form (stage_units from the walk's tiling, after the
# in-kernel count spilled in the trace builds): self-test cases of the shipped cooperative reduce-scatter kernels
# (wide3tma, fp16tma, e4m3tma; wide3p32 with fp32 partials), then the ring at 128-8192 tokens, rule against before.
export PATH="$PATH:/usr/local/cuda/bin"
timeout 60 build/selftest/kernel_selftest --no-perf --only wide3tma,fp16tma,e4m3tma,wide3p32 > $OUT/cases_1747Z.log 2>&1
echo "rc=$?" >> $OUT/cases_1747Z.log
timeout 60 build/selftest/kernel_selftest --no-perf --no-cases --rs-few --only wide3tma,wide3old > $OUT/rs_few_1747Z.log 2>&1
echo "rc=$?" >> $OUT/rs_few_1747Z.log
tail -2 $OUT/cases_1747Z.log; grep -E "^\| [0-9]+B-[a-z0-9]+-m(512|1024|2048) " $OUT/rs_few_1747Z.log; tail -1 $OUT/rs_few_1747Z.log
