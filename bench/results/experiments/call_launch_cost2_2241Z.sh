#!/bin/bash
# One device call (nvidia-h200, 1 GPU): launch_cost.cu (build line in its header; binary carried as
# build/bench/launch_cost) - what an empty kernel costs a call with the GEMM kernel's parameters, threads, shared
# memory, prologue and one TMA pair added one at a time; second run: parameter sizes 1024 - 4160 B, and a 5 us kernel
# with small and large parameters (does the cost hide behind a running kernel?).
. bench/results/experiments/decode_call_lib.sh
timeout 60 build/bench/launch_cost > "$R/launch_cost.log" 2>&1; echo "launch_cost rc=$?"
cat "$R/launch_cost.log"
pack
