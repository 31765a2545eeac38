#!/bin/bash
# 2026-12-04 01:40Z, one device call (nvidia-h200, 1 GPU): tma_hol.cu with its "1/8" modes (every eighth CTA stores
# 64 KiB to host memory, ~40% of the link's rate: all at once before its loads, or 256 bytes after each load).
timeout 60 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"; cat $OUT/tma_hol.log
