#!/bin/bash
# 2026-12-04 02:14Z, one device call (nvidia-h200, 1 GPU; the session's last 241 s of device time): tma_hol.cu with the
# epilogue's own forms (a helper's review: the 0140Z "paced" mode stored 256 bytes after each load, not what the
# kernel does) - 8 KiB store units by warp 0, loads by warp 1, the units at once or each after the one before has read
# its smem (wait_group.read 0, gemm_params.h pace_pushes); then tier 2's paced_pushes group at TP = 2 with the ranks
# on the GPU, its one-hop case new (params.c now leaves a one-hop walk unpaced). Carry build/tpgemm and
# build/bench/tma_hol only.
timeout 60 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"
OUT=$OUT/t2 TIER2_GROUPS=paced_pushes timeout 60 tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "tier2 rc=$?"; tail -3 $OUT/tier2_tp2.log
grep -E "^(stores|none|tma->host w0|w0 units|1/8)" $OUT/tma_hol.log
