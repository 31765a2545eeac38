#!/bin/bash
# One device call (nvidia-h200, 1 GPU): 0625Z - 8 KiB bulk stores (pp128tdu) hold the far ring's loads up as the
# tensor stores do (0.88-0.90), 128-byte row stores (pp128tdr) do not (0.97) but cost 40-50 kcycles of epilogue a
# tile. Here 1 KiB pieces: pp128tdk (every unit as 8 bulk stores of 8 rows, in the epilogue) and pp128spk (the held
# pushes so, spread over the turn wait by warp 0), beside pp128tdq / pp128spq: --rs-far at K 16k / 32k / 64k, and
# the plain ring proxy at 70B-o / 8B-o. Timing only (tile-major, swizzled values). Build here
# (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 300 $K --no-perf --no-cases --rs-far --only pp128tdq,pp128tdk,pp128spq,pp128spk > $OUT/rs_far.log 2>&1
echo "rs-far rc=$?"
grep -A10 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A60 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far) \| 0"
timeout 200 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o --only pp128tdq,pp128tdk,pp128spq,pp128spk \
  > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf.log | grep "^| [0-9]"
grep -A40 "^## where a ping-pong" $OUT/rs_perf.log | grep -E "\| ring \| 0"
