#!/bin/bash
# One device call (nvidia-h200, 1 GPU): 0630Z - 1 KiB pieces (pp128tdk, pp128spk) do not keep the far ring's loads
# going; only 128-byte row stores did (pp128tdr, 0622Z / 0625Z), at ~170 cycles an issue by one thread. Here the
# rows issued by lane 0 of each of the 4 warps (pp128tdw, TPG_DIAG_ROW_STORES=5): does the issue cost split, and do
# the far loads still keep going? Beside pp128tdq / pp128tdr: --rs-far at K 32k / 64k, the plain ring proxy at 70B-o
# / 8B-o. Timing only. Build here (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 250 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k --only pp128tdq,pp128tdr,pp128tdw \
  > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A10 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A60 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far) \| 0"
timeout 200 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o --only pp128tdq,pp128tdr,pp128tdw \
  > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf.log | grep "^| [0-9]"
grep -A40 "^## where a ping-pong" $OUT/rs_perf.log | grep -E "\| (plain|ring) \| 0"
