#!/bin/bash
# Prepared 2026-12-04 04:40Z, not yet run (the session's device time was spent): one device call (nvidia-h200, 1 GPU)
# for the spread pushes after the review's three fixes (docs/perf_notes/2026-12-04-b.md): 1) the self-test's cases of
# pp128sp / pp64sp / pp128spx / pp128spd (the race fix must keep every value); 2) --rs-far on far-k32k / far-k64k for
# pp128tdf / pp128sp / pp128spx, twice (does the spx form still recover the far ring? does sp still not?); 3) the
# plain ring proxy (--rs-perf) on 70B-o / 8B-o for pp128tma / pp128tdf / pp128sp / pp128spx (the local cost).
# Build here (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest. Name the call by its start time.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 120 $K --no-perf --only pp128sp,pp64sp,pp128spx,pp128spd > $OUT/cases.log 2>&1; echo "cases rc=$?"
tail -1 $OUT/cases.log; grep -E "^\[FAIL" $OUT/cases.log | head -5
for r in a b; do
  timeout 200 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k --only pp128tdf,pp128sp,pp128spx \
    > $OUT/rs_far_$r.log 2>&1; echo "rs-far $r rc=$?"
  grep -A12 "^## pushes over" $OUT/rs_far_$r.log | grep "^| far"
done
timeout 150 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o --only pp128tma,pp128tdf,pp128sp,pp128spx \
  > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf.log | tail -5
grep -E "FAIL|status=[1-9]" $OUT/rs_*.log | head -4
