#!/bin/bash
# One device call (nvidia-h200, 1 GPU): 0634Z - the row stores issued by 4 lanes (pp128tdw) lose the far gain of the
# one-lane form (pp128tdr): the slow trickle, not the piece size, kept the loads going. Here pp128spp - the held
# pushes in 1 KiB pieces, each on its own clock over the turn wait (TPG_DIAG_SPREAD_PIECES=2, timing only) - beside
# pp128tdq / pp128tdr / pp128spq: --rs-far at K 16k / 32k / 64k, the plain ring proxy at 70B-o / 8B-o. Build here
# (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 300 $K --no-perf --no-cases --rs-far --only pp128tdq,pp128tdr,pp128spq,pp128spp > $OUT/rs_far.log 2>&1
echo "rs-far rc=$?"
grep -A10 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A60 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far) \| 0"
timeout 200 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o --only pp128tdq,pp128tdr,pp128spq,pp128spp \
  > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf.log | grep "^| [0-9]"
grep -A40 "^## where a ping-pong" $OUT/rs_perf.log | grep -E "\| ring \| 0"
