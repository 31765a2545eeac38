#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tma_sync.cu (who issues, piece size, CTAs in phase or staggered; every CTA
# storing into host memory over its loads), then tma_hol.cu's table and piece sweep again on this machine (the
# 0546Z call's far ring ran lower than 03:03Z's: is the host link slower here?). Build both here (their headers),
# carry build/bench/tma_sync and build/bench/tma_hol.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 120 build/bench/tma_sync > $OUT/tma_sync.log 2>&1; echo "tma_sync rc=$?"
timeout 120 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"
grep -E "^(none|1/8 (burst|paced) )" $OUT/tma_hol.log | grep " 132 "
sed -n '/piece sweep/,$p' $OUT/tma_hol.log | awk '$NF ~ /MHz/ && $4 == 0'
awk '$2 == 0 || $1 == "none"' $OUT/tma_sync.log
