#!/bin/bash
# 2026-12-04 01:35Z, one device call (nvidia-h200, 1 GPU): tma_hol.cu with its pulled, 4 KiB and warp-split modes;
# then the GPU pytest's multi-process gpu_epochs cases that the 0127Z rehearsal failed (their expected count was 7
# after the one-hop walk made it 8; tests/test_gpu.py now reads it from tests/gpu/test_epochs.c).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 60 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"
timeout 400 python3 -m pytest -rs -q tests/test_gpu.py -k "every_call or captured" \
  > $OUT/gpu_pytest_epochs.log 2>&1; echo "pytest rc=$?"; tail -8 $OUT/gpu_pytest_epochs.log
cat $OUT/tma_hol.log
