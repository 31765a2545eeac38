#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_ring.patch: the final stream-K fix-up (through the
# ring at <= 2 live units; else the consumers' loads, now slab by slab, contributor by contributor - the order changed
# after 1924Z because the 128x256's trace build spilled) against x_sk_reg (the fix-up before) and x_sk_ringall.
# (1) tier 2's stream_k group at TP = 2 and 4, every rank on the GPU; (2) the grid at M = 16-64 twice, the second pass
# in the reverse variant order.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 120
tier2 4 stream_k 120
SUB=16,32,48,64:2048,4096,8192:4096,8192,16384
timeout 200 python3 bench/results/experiments/decode_grid.py "$R/grid_a.json" \
  ag_rota_bf16_sk64_tp1,x_sk_ringall_tp1,x_sk_reg_tp1 $SUB > "$R/grid_a.log" 2>&1; echo "grid_a rc=$?"
timeout 200 python3 bench/results/experiments/decode_grid.py "$R/grid_b.json" \
  x_sk_reg_tp1,x_sk_ringall_tp1,ag_rota_bf16_sk64_tp1 $SUB > "$R/grid_b.log" 2>&1; echo "grid_b rc=$?"
grep -c "CHECK FAILED" "$R"/grid_*.log
pack
