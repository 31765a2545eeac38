#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tier 2 in full with every rank on one GPU at TP = 2 and 8 after the walk-order
# rule's second arm (qkv-m128's 64x128 ring: 64-row stages in several waves at TP = 2, 16-row ones at TP = 8).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for tp in 2 8; do
  mkdir -p $OUT/t2
  OUT=$OUT/t2 STEP_BUDGET_S=260 timeout 275 bash tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?" >> $OUT/tier2_tp$tp.log
  cp $OUT/t2/tier2_shared_tp$tp.json $OUT/ 2>/dev/null; rm -rf $OUT/t2
  grep -A10 "^group" $OUT/tier2_tp$tp.log | tail -10; tail -1 $OUT/tier2_tp$tp.log
done
