#!/bin/bash
# Prepared 2026-12-04 04:30Z, not yet run (run it after call_spread_fixes.sh, or instead of it with that one's steps
# folded in): which instruction next to each issue makes the warp-0 spread work, as the record's local store does
# (pp128spx, 03:52Z) - pp128spk2 an ld.volatile.shared before each issue, spk3 an ld.volatile.global, spk4 the local
# store after the issue instead of before, spk5 a clock read alone, spk6 fence.proxy.async.shared::cta
# (TPG_DIAG_SPREAD_KICK, spread_pushes.cuh). 1) the cases of every spk instance; 2) --rs-far on far-k32k / far-k64k
# for pp128tdf / pp128sp / pp128spx and the five. Build here (tests/gpu/kernel_selftest.sh), carry
# build/selftest/kernel_selftest. Name the call by its start time.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
KICKS=pp128spk2,pp128spk3,pp128spk4,pp128spk5,pp128spk6
timeout 150 $K --no-perf --only $KICKS > $OUT/cases.log 2>&1; echo "cases rc=$?"
tail -1 $OUT/cases.log; grep -E "^\[FAIL" $OUT/cases.log | head -5
timeout 400 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k --only pp128tdf,pp128sp,pp128spx,$KICKS \
  > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A20 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -E "FAIL|status=[1-9]" $OUT/rs_far.log | head -4
