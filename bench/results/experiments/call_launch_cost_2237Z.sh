#!/bin/bash
# One device call (nvidia-h200, 1 GPU): launch_cost.cu (build line in its header; binary carried as
# build/bench/launch_cost) - what an empty kernel costs a call with the GEMM kernel's parameters, threads, shared
# memory, prologue and one TMA pair added one at a time - and the real GEMM at one tile (16 x 128 x 64) for scale.
. bench/results/experiments/decode_call_lib.sh
timeout 60 build/bench/launch_cost > "$R/launch_cost.log" 2>&1; echo "launch_cost rc=$?"
for c in ag_rota_bf16_pp64_tp1 ag_rota_bf16_sk64_tp1; do
  timeout 30 build/tpgemm --config $c --tp 1 --devices 0 --m 16 --n 128 --k 64 --iterations 2000 \
    > "$R/cli_$c.log" 2>&1
  echo "$c rc=$? $(grep -E '^Avg runtime' "$R/cli_$c.log")"
done
cat "$R/launch_cost.log"
pack
