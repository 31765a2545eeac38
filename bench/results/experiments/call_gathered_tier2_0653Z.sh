#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the gathered all-gather walk (runtime/src/params.c gathered_params) through
# the runtime with every rank on the one GPU - tier 2 in full at TP = 2 (its new `gathered` group among the rest),
# and at TP = 4 and 8 the groups that reach it (main: small-c / small-d at M = 128; gathered; variants: every shipped
# config on small-a, M = 512, i.e. 128 / 64 rows a stage).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
STEP_BUDGET_S=235 timeout 245 tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "rc=$?" >> $OUT/tier2_tp2.log
cp build/tier2/tier2_shared_tp2.json $OUT/ 2>/dev/null
for tp in 4 8; do
  TIER2_GROUPS=tp$tp,gathered,variants STEP_BUDGET_S=150 timeout 160 tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/tier2_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/tier2_tp$tp.log
  cp build/tier2/tier2_shared_tp$tp.json $OUT/ 2>/dev/null
done
for tp in 2 4 8; do echo "== TP $tp"; grep -E "^FAIL|rc=" $OUT/tier2_tp$tp.log | head -8; tail -14 $OUT/tier2_tp$tp.log; done
