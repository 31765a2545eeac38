#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tests/gpu/run_sanitizers.sh as committed (canary, every TP = 1 kernel
# binary, the self-test's reduce-scatter rings; no TP = N group on one GPU), then the GPU pytest's NCCL cases
# after the communicator got its CTA cap (ncclCommInitRankConfig).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
O=/tmp/o; mkdir -p $O
OUT=$O/san timeout 300 bash tests/gpu/run_sanitizers.sh --share-device > $O/sanitizers.log 2>&1; echo "sanitizers rc=$?" >> $O/sanitizers.log
timeout 240 python3 -m pytest -q -rs tests/test_gpu.py -k nccl > $O/pytest_nccl.log 2>&1; echo "pytest rc=$?" >> $O/pytest_nccl.log
cp $O/san/sanitizers.json $OUT/
tar -C $O -czf $OUT/logs.tgz .
tail -25 $O/sanitizers.log; tail -8 $O/pytest_nccl.log
