#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tier 2's groups that the 0653Z call's budget left unrun at TP = 4 and 8 and
# that reach the gathered all-gather walk or its neighbours - gathered (pieces, barriers beside the GEMM, the wide
# kernel, 82560-byte slots), copy_chunks, overlap_barriers - with every rank on the one GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
for tp in 4 8; do
  TIER2_GROUPS=gathered,copy_chunks,overlap_barriers STEP_BUDGET_S=110 timeout 120 tests/gpu/run_tier2.sh --tp $tp \
    --share-device > $OUT/groups_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/groups_tp$tp.log
  cp build/tier2/tier2_shared_tp$tp.json $OUT/groups_shared_tp$tp.json 2>/dev/null
done
for tp in 4 8; do echo "== TP $tp"; grep -E "^FAIL|rc=" $OUT/groups_tp$tp.log | head -8; tail -8 $OUT/groups_tp$tp.log; done
