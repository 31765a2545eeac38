#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/launch_diag.patch: does the epoch load (a system-scope
# acquire by every thread, made at TP = 1 too) cost the one-tile call its ~2 us? launch_cost.cu with that load (every
# thread / thread 0); launch_paths.py with the ping-pong 64x128, its skeleton, and both without the epoch load
# (TPG_DIAG_NO_EPOCH); then Nsight Compute's duration of the same four.
. bench/results/experiments/decode_call_lib.sh
timeout 60 build/bench/launch_cost > "$R/launch_cost.log" 2>&1; echo "launch_cost rc=$?"
timeout 200 python3 bench/results/experiments/launch_paths.py \
  ag_rota_bf16_pp64_tp1,x_pp64_noep_tp1,x_pp64_skel_tp1,x_pp64_skelnoep_tp1 \
  16x128x64,16x2048x512,16x4096x2048,16x2048x4096 graph > "$R/launch_diag.log" 2>&1
echo "launch_diag rc=$?"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for c in ag_rota_bf16_pp64_tp1 x_pp64_noep_tp1 x_pp64_skel_tp1 x_pp64_skelnoep_tp1; do
  timeout 90 $NCU --clock-control none --cache-control none -k regex:gemm_sm90 --launch-skip 5 --launch-count 3 \
    --metrics gpu__time_duration.sum build/tpgemm --config $c --tp 1 --devices 0 --m 16 --n 128 --k 64 \
    --iterations 10 > "$R/ncu_$c.txt" 2>&1
  echo "ncu $c rc=$? $(grep gpu__time_duration "$R/ncu_$c.txt" | awk '{print $3}' | tr '\n' ' ')"
done
cat "$R/launch_cost.log"; grep -v 'check rel err' "$R/launch_diag.log"; grep -c 'CHECK FAILED' "$R/launch_diag.log"
pack
