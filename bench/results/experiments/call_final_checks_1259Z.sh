#!/bin/bash
# One device call (nvidia-h200, 1 GPU; run 12:59Z after refused starts): the one-hop walk's final form checked
# again - tier 2's one_hop group at TP = 2, 4, 8 with every rank on the GPU; gpu_epochs at TP = 2 and 8, and
# captured; gpu_multiprocess at TP = 2 / 4, whose tpg_op_set_rs_ring is collective now - then the local GEMM against
# cuBLASLt after the gathered walk's pull prologue went into every kernel (09:00Z section): bench/run_local_gemm.sh
# --dtype all, budget-cut to fit the call (the full run needs ~9.3 min). Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/r/gpu.txt
for tp in 2 4 8; do
  TIER2_GROUPS=one_hop STEP_BUDGET_S=100 timeout 100 tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/r/one_hop_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/r/one_hop_tp$tp.log
done
for args in "2 --share-device" "8 --share-device" "2 --share-device --capture"; do
  name=$(echo $args | tr ' ' '_' | tr -d '-')
  timeout 120 build/tests/gpu_epochs $args > $OUT/r/epochs_$name.log 2>&1; echo "rc=$?" >> $OUT/r/epochs_$name.log
done
for tp in 2 4; do
  timeout 120 build/tests/gpu_multiprocess --tp $tp --share-device > $OUT/r/multiprocess_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/r/multiprocess_tp$tp.log
done
for f in $OUT/r/*.log; do echo "== $(basename $f): $(grep -E 'passed, [0-9]+ failed|^rc=|^one_hop |PASSED|FAILED|asking otherwise' $f | tr '\n' ' ')"; done
OUT=$OUT/r timeout 430 bench/run_local_gemm.sh --dtype all --budget-s ${LG_BUDGET_S:-330} > $OUT/r/run_local_gemm.log 2>&1
echo "run_local_gemm rc=$?"
tail -32 $OUT/r/run_local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
