#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tma_hol.cu's table (with "1/8 paced 1K": 1 KiB after every second load, the
# piece size of the producer-streaming lead, prepared last session as call_paced_1k.sh) and its piece sweep (the same
# 512 B a load in pieces of 512 B to 8 KiB, every 8th / 4th CTA storing). Build here (tma_hol.cu's header), carry
# build/bench/tma_hol only.
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 120 build/bench/tma_hol > $OUT/tma_hol.log 2>&1; echo "tma_hol rc=$?"
grep -E "^(stores|none|1/8 (burst|paced))" $OUT/tma_hol.log | grep -E "stores| 132 "
sed -n '/piece sweep/,$p' $OUT/tma_hol.log
