#!/bin/bash
# The second command of the 0756Z call, on the machine still warm (its output: variants_tp4.log,
# variants_shared_tp{4,8}.json in this folder).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1; for tp in 4 8; do TIER2_GROUPS=variants STEP_BUDGET_S=80 timeout 85 tests/gpu/run_tier2.sh --tp $tp --share-device > $OUT/variants_tp$tp.log 2>&1; echo "rc=$?" >> $OUT/variants_tp$tp.log; cp $OUT/tier2_shared_tp$tp.json $OUT/variants_shared_tp$tp.json; done; for tp in 4 8; do tail -6 $OUT/variants_tp$tp.log; done
