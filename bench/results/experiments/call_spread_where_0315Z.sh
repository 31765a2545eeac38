#!/bin/bash
# One device call (nvidia-h200, 1 GPU): where spread pushes cost the local ring (the 0309Z call: pp128sp's ring 1.7-4%
# below pp128tdf's on 70B-o / 8B-o) - issuing from inside the mainloop, or spreading? pp128sp1 issues the held units
# at once at the next mainloop's first k-block, pp128sp2 at once after it (TPG_DIAG_SPREAD_AT). The plain ring proxy
# (--rs-perf) on 70B-o / 8B-o / 70B-fc2 twice (two processes: the
# spread between them is the noise), then --rs-far on k32k / k64k.
# Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
K=build/selftest/kernel_selftest
timeout 100 $K --no-perf --only pp128sp1,pp128sp2 > $OUT/cases.log 2>&1; echo "cases rc=$?"; tail -1 $OUT/cases.log
timeout 150 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o,70B-fc2 \
  --only pp128tma,pp128tdf,pp128sp,pp128sp1,pp128sp2 > $OUT/rs_perf_a.log 2>&1; echo "rs-perf a rc=$?"
timeout 150 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o,70B-fc2 \
  --only pp128sp2,pp128sp1,pp128sp,pp128tdf,pp128tma > $OUT/rs_perf_b.log 2>&1; echo "rs-perf b rc=$?"
timeout 200 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k \
  --only pp128tdf,pp128sp,pp128sp1,pp128sp2 > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -E "FAIL|status=[1-9]" $OUT/*.log | head
for f in a b; do grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf_$f.log | tail -6; done
grep -A12 "^## pushes over the host link" $OUT/rs_far.log | tail -9
