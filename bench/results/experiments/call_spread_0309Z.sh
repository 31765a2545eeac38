#!/bin/bash
# One device call (nvidia-h200, 1 GPU): spread pushes (TPG_SPREAD_PUSHES, new: a pushing ping-pong tile's TMA
# stores go out during its warpgroup's next mainloop, one every k_blocks / units k-blocks, its flag deferred). 1) the
# self-test's cases of the new instances (pp128tdf: the shipped pp128tma with deferred flags; pp128sp: with spread
# pushes on top; pp64sp: the 64x128's); 2) the ring proxy with its pushes over the host link (--rs-far, now with a
# "far walk" variant: the same pushes without flags) for pp128tma / pp128tdf / pp128sp / wide3tma; 3) the plain ring
# proxy on the anchors (--rs-perf) for pp128tma / pp128tdf / pp128sp / pp64tma / pp64sp: spreading must cost nothing
# where the pushes are local. Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
K=build/selftest/kernel_selftest
timeout 150 $K --no-perf --only pp128tdf,pp128sp,pp64sp > $OUT/cases.log 2>&1; echo "cases rc=$?"
tail -1 $OUT/cases.log
grep -E "FAIL" $OUT/cases.log | head
timeout 300 $K --no-perf --no-cases --rs-far --only pp128tma,pp128tdf,pp128sp,wide3tma > $OUT/rs_far.log 2>&1
echo "rs-far rc=$?"
timeout 200 $K --no-perf --no-cases --rs-perf --only pp128tma,pp128tdf,pp128sp,pp64tma,pp64sp > $OUT/rs_perf.log 2>&1
echo "rs-perf rc=$?"
grep -E "FAIL|status=[1-9]" $OUT/rs_far.log $OUT/rs_perf.log | head
grep -A10 "^## reduce-scatter on one GPU" $OUT/rs_perf.log
grep -A16 "^## pushes over the host link" $OUT/rs_far.log
