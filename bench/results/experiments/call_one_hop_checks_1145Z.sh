#!/bin/bash
# One device call (nvidia-h200, 1 GPU), every rank on the one GPU: the one-hop reduce-scatter walk with the rule's
# final bound (TPG_ONE_HOP_MAX_ROWS 64), checked: gpu_epochs at TP = 2 and 4 (its eighth run switches a one-hop op to
# its ring and back between calls, with the barriers beside the GEMM in between; new operands every call), captured,
# and one process per rank; tier 2 in full at TP = 2, and its one_hop and variants groups at TP = 4 and 8 (the
# variants' few-token shapes run one-hop at TP = 8); the GPU pytest's timeout cases on one GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
for args in "2 --share-device" "4 --share-device" "2 --share-device --capture" "8 --share-device" \
            "2 --share-device --processes"; do
  name=$(echo $args | tr ' ' '_' | tr -d '-')
  timeout 170 build/tests/gpu_epochs $args > $OUT/epochs_$name.log 2>&1; echo "rc=$?" >> $OUT/epochs_$name.log
done
STEP_BUDGET_S=200 timeout 210 tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "rc=$?" >> $OUT/tier2_tp2.log
cp build/tier2/tier2_shared_tp2.json $OUT/ 2>/dev/null
for tp in 4 8; do
  TIER2_GROUPS=one_hop,variants STEP_BUDGET_S=100 timeout 110 tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/tier2_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/tier2_tp$tp.log
done
for ov in "" --overlap-barriers; do
  timeout 60 build/tests/gpu_timeout 300 --share-device --few-tokens $ov > $OUT/timeout_few$ov.log 2>&1
  echo "rc=$?" >> $OUT/timeout_few$ov.log
done
for f in $OUT/*.log; do
  echo "== $(basename $f): $(grep -E 'passed, [0-9]+ failed|^rc=' $f | tr '\n' ' ')"
  grep -E "FAIL|^one_hop|^variants|^tp2 |^group" $f | grep -v "^PASS" | head -12
done
cd $OUT && tar czf records.tgz --remove-files *.log *.json gpu.txt && ls -la $OUT
