#!/bin/bash
# One device call (nvidia-h200, 1 GPU): spread pushes issued in the warpgroup's wait for its turn (pp128sp, pp64sp
# rebuilt: the ping-pong turns through mbarriers, thread 0 issuing the held units one every window / units cycles
# while it waits) instead of inside its next mainloop (0309Z / 0315Z: that cost the local ring 2-5% at short K).
# 1) the self-test's cases of pp128sp / pp64sp; 2) the plain ring proxy (--rs-perf, all anchors) for pp128tma /
# pp128tdf / pp128sp / pp64tma / pp64sp, twice; 3) --rs-far for pp128tma / pp128tdf / pp128sp.
# Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
K=build/selftest/kernel_selftest
timeout 100 $K --no-perf --only pp128sp,pp64sp > $OUT/cases.log 2>&1; echo "cases rc=$?"; tail -1 $OUT/cases.log
grep -E "^\[FAIL" $OUT/cases.log | head
for r in a b; do
  timeout 150 $K --no-perf --no-cases --rs-perf --only pp128tma,pp128tdf,pp128sp,pp64tma,pp64sp \
    > $OUT/rs_perf_$r.log 2>&1; echo "rs-perf $r rc=$?"
done
timeout 250 $K --no-perf --no-cases --rs-far --only pp128tma,pp128tdf,pp128sp > $OUT/rs_far.log 2>&1
echo "rs-far rc=$?"
grep -E "FAIL|status=[1-9]" $OUT/rs_*.log | head
for r in a b; do grep -A10 "^## reduce-scatter on one GPU" $OUT/rs_perf_$r.log | tail -7; done
grep -A13 "^## pushes over the host link" $OUT/rs_far.log | tail -10
