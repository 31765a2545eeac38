#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the copy-engine route of the push, before any of it is built - --rs-far's new
# "far ce" variant (the ring with local pushes while the copy engine carries the same bytes into host memory beside
# each call, the call's time including the copy's) for pp128tdq (phase sums) and pp128tma (the shipped ping-pong) at
# K 16k / 32k / 64k. Build here (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 300 $K --no-perf --no-cases --rs-far --only pp128tma,pp128tdq > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A8 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A60 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far|far ce) \| 0"
grep -E "FAIL|status=[1-9]" $OUT/rs_far.log | head -3
