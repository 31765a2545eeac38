#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the interleaved walk's rule (params.c: a reduce-scatter ring of one wave
# with one row of tiles a stage). (1) the ring's parts with "minor" on the picks the rule now interleaves and has
# not timed (405B-fc2 M = 256 wide, 70B-o M = 256 128x128, 8B-o M = 128-512) and again on 70B-fc2 M = 128 / 256;
# (2) tier 2's default picks at TP = 2 and 4 with the ranks on one GPU (the new small-c ring runs interleaved).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
timeout 230 $S --no-perf --no-cases --rs-parts --rs-few --only pp64tma,pp128tma,wide3tma \
  --problem 405B-fc2-m256,70B-o-m256,8B-o-m128,8B-o-m256,8B-o-m512,70B-fc2-m128,70B-fc2-m256 > $OUT/parts.log 2>&1
echo "rc=$?" >> $OUT/parts.log
for tp in 2 4; do
  mkdir -p $OUT/t$tp
  OUT=$OUT/t$tp TIER2_GROUPS=tp$tp STEP_BUDGET_S=100 timeout 105 bash tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/tier2_tp$tp.log 2>&1
  echo "tier2 rc=$?" >> $OUT/tier2_tp$tp.log; rm -rf $OUT/t$tp
done
grep -A50 "ring's parts" $OUT/parts.log | grep "^|"; tail -1 $OUT/parts.log
for tp in 2 4; do grep -E "small-c" $OUT/tier2_tp$tp.log | head -8; grep -A3 "^group" $OUT/tier2_tp$tp.log; tail -1 $OUT/tier2_tp$tp.log; done
