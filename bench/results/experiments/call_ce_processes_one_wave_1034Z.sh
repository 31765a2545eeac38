#!/bin/bash
# One device call (nvidia-h200, 1 GPU), after call_ce_processes_1033Z.sh (calls 2-4 timed out: a ring call with the
# ranks in mixed barrier modes, or a one-hop call): with copy-engine partials the ring no longer interleaves one
# wave either (stage after stage only). Does --processes --share-device pass now? Twice, the log in one file.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$OUT/all.log
for i in 1 2; do
  echo "=== gpu_epochs 2 --processes ($i)" >> $L
  timeout 240 build/tests/gpu_epochs 2 --processes --share-device >> $L 2>&1; echo "| run $i | rc=$? |"
done
grep -E "changing|passed" $L | cut -c1-300
