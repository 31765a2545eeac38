#!/bin/bash
# 2026-12-04 02:18Z, one device call (nvidia-h200, 1 GPU; the session's last device seconds): tma_hol.cu with the
# 8 KiB units each issued after the one before has *completed* (wait_group 0) - the 0214Z call showed that waiting
# for their smem reads (wait_group.read 0, the shipped pace_pushes) leaves the loads as slow as the burst.
timeout 30 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"
grep -E "^(stores|none|tma->host w0|w0 |1/8 w0|1/8 paced)" $OUT/tma_hol.log | grep -E "stores| 132 "
