#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tier 2 with every rank on one GPU at TP = 4 and 8, in full, after the
# flag rule's committed form (c0d4ff1).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for tp in 4 8; do
  mkdir -p $OUT/t$tp
  OUT=$OUT/t$tp STEP_BUDGET_S=270 timeout 275 bash tests/gpu/run_tier2.sh --tp $tp --share-device > $OUT/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?" >> $OUT/tier2_tp$tp.log
  cp $OUT/t$tp/tier2_shared_tp$tp.json $OUT/ 2>/dev/null; rm -rf $OUT/t$tp
done
for tp in 4 8; do grep -A10 "^group" $OUT/tier2_tp$tp.log | tail -10; tail -1 $OUT/tier2_tp$tp.log; done
