#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the tree with the epoch read once a CTA (thread 0, handed on through shared
# memory) and not at all at TP = 1: (1) launch_cost.cu with griddepcontrol, 168 registers and 3000 straight-line
# instructions beside the prologue; (2) launch_paths.py, the ping-pong and stream-K 64x128 (graph launch) at one tile
# and decode sizes (the 2255Z call timed the old kernel: pp64 6.36 / 7.82 / 13.69 / 17.21 us); (3) Nsight Compute's
# duration at one tile (old: 4.80-5.28 us); (4) gpu_epochs at TP = 2 shared, direct and captured, and the PDL chain;
# (5) tier 2 at TP = 2, every rank on the GPU (every fused walk reads the epoch the new way).
. bench/results/experiments/decode_call_lib.sh
timeout 60 build/bench/launch_cost > "$R/launch_cost.log" 2>&1; echo "launch_cost rc=$?"
timeout 120 python3 bench/results/experiments/launch_paths.py ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1 \
  16x128x64,16x2048x512,16x4096x2048,16x2048x4096 graph > "$R/launch_paths.log" 2>&1; echo "launch_paths rc=$?"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 90 $NCU --clock-control none --cache-control none -k regex:gemm_sm90 --launch-skip 5 --launch-count 3 \
  --metrics gpu__time_duration.sum build/tpgemm --config ag_rota_bf16_pp64_tp1 --tp 1 --devices 0 --m 16 --n 128 \
  --k 64 --iterations 10 > "$R/ncu_pp64.txt" 2>&1
echo "ncu pp64 rc=$? $(grep gpu__time_duration "$R/ncu_pp64.txt" | awk '{print $3}' | tr '\n' ' ')"
for a in "--share-device" "--share-device --capture"; do
  timeout 120 build/tests/gpu_epochs 2 $a > "$R/gpu_epochs.log" 2>&1
  echo "gpu_epochs 2 $a rc=$? $(tail -1 "$R/gpu_epochs.log")"
done
timeout 60 build/tests/gpu_pdl_chain > "$R/pdl_chain.log" 2>&1; echo "gpu_pdl_chain rc=$? $(tail -1 "$R/pdl_chain.log")"
tier2 2 "" 300
cat "$R/launch_cost.log"; grep -v 'check rel err' "$R/launch_paths.log"; grep -c 'CHECK FAILED' "$R/launch_paths.log"
pack
