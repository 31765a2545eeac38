#!/bin/bash
# One device call (nvidia-h200, 1 GPU): 0622Z showed one-dimensional row stores (pp128tdr) keep the far ring's
# mainloops from growing (far / ring 0.968-0.971 against 0.895-0.943 with tensor stores) at 55 kcycles of epilogue a
# tile; here pp128tdu - each unit as one 8 KiB bulk store into a tile-major layout (TPG_DIAG_ROW_STORES=2, timing
# only) - beside pp128tdq and pp128tdr: --rs-far at K 16k / 32k / 64k twice, and the plain ring proxy at 70B-o and
# 8B-o (the epilogue's local cost). Build here (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
for r in a b; do
  timeout 250 $K --no-perf --no-cases --rs-far --only pp128tdq,pp128tdr,pp128tdu > $OUT/rs_far_$r.log 2>&1
  echo "rs-far $r rc=$?"
  grep -A8 "^## pushes over" $OUT/rs_far_$r.log | grep "^| far"
done
grep -A40 "^## where a ping-pong" $OUT/rs_far_a.log | grep "^| far" | grep -E "\| (ring|far) \| 0"
timeout 150 $K --no-perf --no-cases --rs-perf --problem 70B-o,8B-o --only pp128tdq,pp128tdr,pp128tdu \
  > $OUT/rs_perf.log 2>&1; echo "rs-perf rc=$?"
grep -A8 "^## reduce-scatter on one GPU" $OUT/rs_perf.log | grep "^| [0-9]"
grep -A30 "^## where a ping-pong" $OUT/rs_perf.log | grep -E "\| (plain|ring) \| 0"
