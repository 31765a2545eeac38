#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the phase sums (0619Z: the far ring's stage-0 mainloops grow 10-16% while
# its pushes are in flight, epilogue waits barely) for pp128tdq against pp128tdr - the same kernel storing every unit
# as 64 one-dimensional 128-byte row stores instead of one tensor store (TPG_DIAG_ROW_STORES; values land swizzled,
# timing only) - on --rs-far at K 32k / 64k, twice. Build here (tests/gpu/kernel_selftest.sh), carry
# build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
for r in a b; do
  timeout 200 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k --only pp128tdq,pp128tdr \
    > $OUT/rs_far_$r.log 2>&1; echo "rs-far $r rc=$?"
  grep -A30 "^## where a ping-pong" $OUT/rs_far_$r.log | grep "^| far" | grep -v plain
  grep -A8 "^## pushes over" $OUT/rs_far_$r.log | grep "^| far"
done
