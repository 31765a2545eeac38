#!/bin/bash
# One device call (nvidia-h200, 1 GPU), after call_ce_partials_1021Z.sh (whose logs past 8 files did not come back):
# the failed runs again, their logs in one file - gpu_epochs 2 --capture, 4, 2 --processes; rs_tilb_bf16_ce_tp8 with
# the barriers beside the GEMM - then gpu_epochs 4 and the TP = 8 run with CUDA_DEVICE_MAX_CONNECTIONS=32 (are the
# copy chains' mem-op waits blocking other ranks' work queued behind them on a shared hardware queue?).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/all.log
for a in "2 --capture" "4" "2 --processes"; do
  echo "=== gpu_epochs $a" >> $L
  timeout 240 build/tests/gpu_epochs $a --share-device >> $L 2>&1; echo "| gpu_epochs $a | rc=$? |"
done
TP8=(--share-device --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --iterations 3 --warmup-iterations 1 --timeout-ms 3000)
echo "=== tp8 overlap" >> $L; timeout 100 build/tpgemm "${TP8[@]}" --overlap-barriers >> $L 2>&1; echo "| tp8 overlap | rc=$? |"
echo "=== tp8" >> $L; timeout 100 build/tpgemm "${TP8[@]}" >> $L 2>&1; echo "| tp8 | rc=$? |"
export CUDA_DEVICE_MAX_CONNECTIONS=32
echo "=== tp8 overlap, 32 connections" >> $L; timeout 100 build/tpgemm "${TP8[@]}" --overlap-barriers >> $L 2>&1; echo "| tp8 overlap conn32 | rc=$? |"
echo "=== gpu_epochs 4, 32 connections" >> $L; timeout 240 build/tests/gpu_epochs 4 --share-device >> $L 2>&1; echo "| gpu_epochs 4 conn32 | rc=$? |"
grep -E "FAIL|fail|error|rror" $L | head -40
