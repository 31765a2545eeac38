#!/bin/bash
# One device call (nvidia-h200, 1 GPU): 0637Z - 1 KiB pieces each on its own clock over the turn wait (pp128spp) do
# not help either; only one lane's 128-byte row stores in the epilogue do (pp128tdr). Here the held pushes as 128-byte
# rows, each on its own clock over the wait (pp128spr, TPG_DIAG_SPREAD_PIECES=3, timing only), beside pp128tdq /
# pp128tdr: --rs-far at K 16k / 32k / 64k. Build here (tests/gpu/kernel_selftest.sh), carry
# build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 300 $K --no-perf --no-cases --rs-far --only pp128tdq,pp128tdr,pp128spr > $OUT/rs_far.log 2>&1
echo "rs-far rc=$?"
grep -A10 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A60 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far) \| 0"
