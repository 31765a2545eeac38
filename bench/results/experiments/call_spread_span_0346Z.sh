#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the warp-0 spread ran far/ring 0.910 at far-k32k beside pp128tma / pp128tdf
# (0332Z) but 0.984 alone as pp128spd (0342Z, + CTA 0's timing record): the same run now holds pp128tdf, pp128sp
# (3/4 of the window), pp128sp4 (the whole window) and pp128spd, twice (two processes), on far-k32k and far-k64k.
# Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
for r in a b; do
  timeout 200 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k --only pp128tdf,pp128sp,pp128spd,pp128sp4 \
    > $OUT/rs_far_$r.log 2>&1; echo "rs-far $r rc=$?"
  grep -A12 "^## pushes over" $OUT/rs_far_$r.log | grep "^| far"
done
grep -E "FAIL|status=[1-9]" $OUT/rs_far_*.log | head -4
