#!/bin/bash
# Prepared 2026-12-04 02:50Z, not yet run (the session's device time was spent): one device call (nvidia-h200, 1 GPU),
# tma_hol.cu with its "1/8 paced 1K" mode - the storing CTAs' 64 KiB as 1 KiB stores, one after every second load, as
# a producer would stream a swizzled 8-row box of a store unit every other k-block (docs/PERF_NOTES.md, "Next") -
# beside the 256-byte pacing (1.01x at 0140Z) and the burst (1.29x). Build here (tma_hol.cu's header), carry
# build/bench/tma_hol only. Name the call by its start time when it runs.
timeout 60 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"
grep -E "^(stores|none|1/8)" $OUT/tma_hol.log | grep -E "stores| 132 "
