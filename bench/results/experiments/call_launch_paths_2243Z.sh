#!/bin/bash
# One device call (nvidia-h200, 1 GPU): launch_cost.cu again with one-node-graph variants (binary carried as
# build/bench/launch_cost), then launch_paths.py: the ping-pong and stream-K 64x128 ops launched as their graph
# (default) and directly with PDL, against cuBLAS, from one tile of one k-block up to 16 x 2048 x 4096.
. bench/results/experiments/decode_call_lib.sh
timeout 60 build/bench/launch_cost > "$R/launch_cost.log" 2>&1; echo "launch_cost rc=$?"
timeout 200 python3 bench/results/experiments/launch_paths.py ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1 \
  16x128x64,16x128x512,16x2048x512,16x2048x4096,64x2048x4096,16x4096x2048 > "$R/launch_paths.log" 2>&1
echo "launch_paths rc=$?"
cat "$R/launch_cost.log" "$R/launch_paths.log"
pack
