#!/bin/bash
# One device call (nvidia-h200, 1 GPU): pp128spd's spread helps the far ring (0.976-0.986, 0346Z) where pp128sp's
# (the same code without the timing record) does not (0.919-0.930, like deferred flags alone). Variants: pp128spx
# (the record's local stores before each issue, no record), pp128spf (a membar.cta there instead). 1) the self-test's
# cases of pp128sp / spd / spx / spf (does any of them lose a store?); 2) --rs-far on far-k32k and far-k64k for
# pp128tdf / sp / spd / spx / spf. Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 100 $K --no-perf --only pp128sp,pp128spd,pp128spx,pp128spf > $OUT/cases.log 2>&1; echo "cases rc=$?"
tail -1 $OUT/cases.log; grep -E "^\[FAIL" $OUT/cases.log | head -5
timeout 250 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k \
  --only pp128tdf,pp128sp,pp128spd,pp128spx,pp128spf > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A14 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -E "FAIL|status=[1-9]" $OUT/rs_far.log | head -4
