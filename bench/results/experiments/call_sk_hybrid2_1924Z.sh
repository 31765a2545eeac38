#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_ring.patch. The 1921Z run: at M = 48 / 64, where the
# shipped kernel's consumers load the contributions from L2 after thread 0's wait for the tile's count, the fix-up
# before (x_sk_reg: a flag a contributor, waited on as many threads) ran 1.010-1.016x faster. The count wait in the
# consumers now backs off to 64 ns too (TPG_SK_COUNT_SLEEP_NS). The grid at M = 32 / 48 / 64 twice (the second pass
# in the reverse variant order: the two passes' agreement is the noise), then traces at 64 x 2048 x 4096.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 120
SUB=32,48,64:2048,4096,8192:4096,8192,16384
timeout 200 python3 bench/results/experiments/decode_grid.py "$R/grid_a.json" \
  ag_rota_bf16_sk64_tp1,x_sk_ringall_tp1,x_sk_reg_tp1 $SUB > "$R/grid_a.log" 2>&1; echo "grid_a rc=$?"
timeout 200 python3 bench/results/experiments/decode_grid.py "$R/grid_b.json" \
  x_sk_reg_tp1,x_sk_ringall_tp1,ag_rota_bf16_sk64_tp1 $SUB > "$R/grid_b.log" 2>&1; echo "grid_b rc=$?"
grep -c "CHECK FAILED" "$R"/grid_*.log
trace hyb64_2048 --config ag_rota_bf16_sk64_tp1 --m 64 --n 2048 --k 4096
trace reg64_2048 --config x_sk_reg_tp1 --m 64 --n 2048 --k 4096
pack
