#!/bin/bash
# One device call (nvidia-h200, 1 GPU), after a review (16bf561 +): the copy chains' mem-op waits test "nonzero"
# (CU_STREAM_WAIT_VALUE_AND of all bits) instead of ">= 1" (GEQ compares with wrap-around). Every rank on GPU 0, 32
# queues: the _ce twins' checks at TP = 2 / 8, gpu_epochs at TP = 2 (plain, captured, one process per rank) and 4,
# the missing-peer timeout, and gpu_timeout's refusal of --copy-engine-partials --allgather (exit 2).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$OUT/all.log
T=build/tpgemm
run() { local name=$1; shift; echo "=== $name" >> $L
  timeout 150 $T --share-device "$@" --iterations 3 --warmup-iterations 1 >> $L 2>&1; echo "| $name | rc=$? |"; }
run ce_tila_tp2_l2 --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1
run ce_tilb_tp8_overlap --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --overlap-barriers
for a in "2" "2 --capture" "2 --processes" "4"; do
  echo "=== gpu_epochs $a" >> $L; timeout 240 build/tests/gpu_epochs $a --share-device >> $L 2>&1
  echo "| gpu_epochs $a | rc=$? | $(grep -E '^(rank [01]: )?[0-9]+ passed' $L | tail -1) |"
done
echo "=== gpu_timeout" >> $L
timeout 120 build/tests/gpu_timeout 300 --share-device --copy-engine-partials >> $L 2>&1; echo "| gpu_timeout ce | rc=$? |"
timeout 60 build/tests/gpu_timeout 300 --share-device --copy-engine-partials --allgather >> $L 2>&1
echo "| gpu_timeout ce --allgather | rc=$? (2 expected) |"
grep -E "missing peer|late peer|Disposition" $L | cut -c1-160
