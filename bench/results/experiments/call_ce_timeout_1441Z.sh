#!/bin/bash
# One device call (nvidia-h200, 1 GPU): call_ce_fork_1437Z.sh's two timeout runs again - it had left them without
# CUDA_DEVICE_MAX_CONNECTIONS=32, and the op refused to start (TPG_ERR_UNSUPPORTED, as designed). The missing peer with copy-engine partials, every rank on GPU 0, with and without the barriers beside the
# GEMM. Carry build/tests/gpu_timeout.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_MAX_CONNECTIONS=32
for o in "" "--overlap-barriers"; do
  echo "=== gpu_timeout $o" >> $OUT/all.log
  timeout 120 build/tests/gpu_timeout 300 --share-device --copy-engine-partials $o >> $OUT/all.log 2>&1
  echo "| gpu_timeout ce $o | rc=$? |"
done
grep -E "missing peer|late peer|fresh" $OUT/all.log | cut -c1-170
