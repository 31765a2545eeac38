#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the committed tree after the session's cleanup (spread pushes with the CTA
# phase and no in-phase / kick / STL / pieces diagnostics; TPG_DIAG_PHASES; TPG_DIAG_ROW_STORES 1 only): the cases of
# pp128tma / pp128tdf / pp128sp / pp64sp / pp128spd / pp128tdq / pp128spq (pp128tdr: the skip line), and --rs-far at
# K 32k for pp128tdq / pp128spq / pp128tdr. Build here (tests/gpu/kernel_selftest.sh), carry
# build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 200 $K --no-perf --only pp128tma,pp128tdf,pp128sp,pp64sp,pp128spd,pp128tdq,pp128spq,pp128tdr \
  > $OUT/cases.log 2>&1; echo "cases rc=$?"
grep -E "^\[skip|^\[FAIL" $OUT/cases.log | head -5; tail -1 $OUT/cases.log
timeout 150 $K --no-perf --no-cases --rs-far --problem far-k32k --only pp128tdq,pp128spq,pp128tdr \
  > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A8 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A30 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far) \| 0"
