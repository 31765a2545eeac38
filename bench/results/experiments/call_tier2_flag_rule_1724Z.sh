#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tier 2 with every rank on one GPU at TP = 2, 4 and 8 after the cooperative
# kernels' flag rule (a signal flag deferred only where a stage spans two rounds of the grid, epilogue.cuh): every
# fused config on shapes of few tiles per stage (flushed at once) and the anchors (deferred). TP = 2 without its
# one-GPU tp1 group.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for tp in 2 4 8; do
  g=""; [ $tp = 2 ] && g=tp2,variants,scalars,copy_chunks,overlap_barriers,pull_partials
  mkdir -p $OUT/t$tp
  OUT=$OUT/t$tp TIER2_GROUPS=$g STEP_BUDGET_S=160 timeout 165 bash tests/gpu/run_tier2.sh --tp $tp --share-device > $OUT/tier2_tp${tp}_1724Z.log 2>&1
  echo "tier2 tp$tp rc=$?" >> $OUT/tier2_tp${tp}_1724Z.log
  cp $OUT/t$tp/tier2_shared_tp$tp.json $OUT/ 2>/dev/null; rm -rf $OUT/t$tp
done
for tp in 2 4 8; do grep -A12 "^group" $OUT/tier2_tp${tp}_1724Z.log | tail -12; tail -1 $OUT/tier2_tp${tp}_1724Z.log; done
