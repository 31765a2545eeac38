#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the session's final tree (84d6b77) - tier 2's quick run with both ranks on
# GPU 0 (the CLI's default picks and by-name twins through the launch event), then gpu_epochs with one process a rank
# (tpg_op_set_rs_ring's new agreement after the rebuild; the one-hop op switches to its ring and back between calls).
# Carry build/{tpgemm,libtpgemm.so}, build/tests/gpu_{epochs,multiprocess}.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/t2
OUT=$OUT/t2 timeout 200 bash tests/gpu/run_tier2.sh --tp 2 --share-device --quick > $OUT/tier2_quick.log 2>&1
echo "tier2 quick rc=$?"; tail -2 $OUT/tier2_quick.log
CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 100 build/tests/gpu_epochs 2 --share-device --processes > $OUT/epochs_mp.log 2>&1
echo "gpu_epochs --processes rc=$?"; grep -v " ok$" $OUT/epochs_mp.log | tail -3
cd $OUT && tar czf t2.tgz t2 && rm -rf t2
