#!/bin/bash
# 2026-12-04 01:27Z, one device call (nvidia-h200, 1 GPU): tma_hol.cu (does a slow bulk store - to host-mapped
# memory here - hold up the bulk loads issued after it on the same SM?), then the one-GPU rehearsal of the first x2
# call on the current tree (the 2026-12-03 changes - gathered and one-hop walks, stream-K, spread, epoch once a CTA -
# had run tier 2 shared, not the whole call): every step of tests/gpu/run_all.sh but the local GEMM and tune, every
# rank on GPU 0. Carry build/ (with build/selftest/kernel_selftest and build/bench/tma_hol) and .ninja_log.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 60 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"; cat $OUT/tma_hol.log
O=/tmp/o; mkdir -p $O
OUT=$O/all RUN_ALL_BUDGET_S=480 bash tests/gpu/run_all.sh --tp 2 --share-device --skip local_gemm,tune > $O/run_all.log 2>&1
echo "run_all rc=$?" >> $O/run_all.log
cp $O/all/* $OUT/ 2>/dev/null; cp $O/run_all.log $OUT/
tail -14 $O/run_all.log
