#!/bin/bash
# One device call (nvidia-h200, 1 GPU): why the warp-0 spread (0332Z) did not help the far ring where 0326Z's mbarrier
# turns did - CTA 0's spread timing in one far launch (pp128spd: pp128sp recording, per turn of each warpgroup, the
# held units, the window estimate, the cycles at which warp 0 issued each unit and when the turn came) on far-k32k.
# Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 200 $K --no-perf --no-cases --rs-far --problem far-k32k --only pp128spd > $OUT/rs_far_diag.log 2>&1
echo "rc=$?"; grep -A6 "^## pushes over" $OUT/rs_far_diag.log | tail -2
grep "^spread" $OUT/rs_far_diag.log | head -70
