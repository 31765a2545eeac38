#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the walk-order rule's final form (interleaved past one wave only at <= 64 rows
# and >= 32 MiB of B a stage, stages that split M, not over NCCL) through the runtime: tier 2's tp2 / tp4 groups with
# every rank on one GPU, with the new small-d shape (128 x 8192 x 8192: at 63 / 31 SMs a rank its TilingA ring walks
# interleaved in several waves at TP = 2 and 4); the tp1 group with small-d.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for tp in 2 4; do
  g=tp$tp; [ $tp = 2 ] && g=tp2,tp1
  mkdir -p $OUT/t2
  OUT=$OUT/t2 TIER2_GROUPS=$g STEP_BUDGET_S=150 timeout 160 bash tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?" >> $OUT/tier2_tp$tp.log
  cp $OUT/t2/tier2_shared_tp$tp.json $OUT/tier2_groups_tp$tp.json 2>/dev/null; rm -rf $OUT/t2
  grep -E "small-d" $OUT/tier2_tp$tp.log | head -20
  grep -A4 "^group" $OUT/tier2_tp$tp.log; tail -1 $OUT/tier2_tp$tp.log
done
