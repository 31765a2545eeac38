#!/bin/bash
# One device call (nvidia-h200, 1 GPU): which call of gpu_epochs --processes --share-device fails with copy-engine
# partials at 64 rows a stage (rs_tila_bf16_ce_tp2: one-hop calls 0, 4-5; its ring, with the copy chains, 1-3)?
# gpu_epochs now names the config and call in that message. Twice, the log in one file.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$OUT/all.log
for i in 1 2; do
  echo "=== gpu_epochs 2 --processes ($i)" >> $L
  timeout 240 build/tests/gpu_epochs 2 --processes --share-device >> $L 2>&1; echo "| run $i | rc=$? |"
done
grep -E "changing|passed" $L | cut -c1-300
