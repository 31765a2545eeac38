#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the spread pushes with each CTA on its own phase (pp128sp, pp64sp; tma_sync's
# finding, 0600Z) against the same with every CTA on one clock (pp128spy, the form before) and deferred flags alone
# (pp128tdf, pp64tma): 1) the cases of pp128sp / pp64sp / pp128spy; 2) --rs-far at K 16k / 32k / 64k, twice;
# 3) the plain ring proxy (--rs-perf) on 70B-o / 8B-o (the local cost), twice. Build here
# (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 120 $K --no-perf --only pp128sp,pp64sp,pp128spy > $OUT/cases.log 2>&1; echo "cases rc=$?"
tail -1 $OUT/cases.log; grep -E "^\[FAIL" $OUT/cases.log | head -5
for r in a b; do
  timeout 200 $K --no-perf --no-cases --rs-far --only pp128tdf,pp128sp,pp128spy,pp64tma,pp64sp \
    > $OUT/rs_far_$r.log 2>&1; echo "rs-far $r rc=$?"
  grep -A20 "^## pushes over" $OUT/rs_far_$r.log | grep "^| far"
done
for r in a b; do
  timeout 150 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o --only pp128tma,pp128tdf,pp128sp,pp64tma,pp64sp \
    > $OUT/rs_perf_$r.log 2>&1; echo "rs-perf $r rc=$?"
  grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf_$r.log | grep "^| [0-9]"
done
grep -E "FAIL|status=[1-9]" $OUT/rs_*.log | head -4
