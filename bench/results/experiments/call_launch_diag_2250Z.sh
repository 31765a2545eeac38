#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/launch_diag.patch: where a one-tile call's ~3 us beyond
# a minimal TMA kernel go. The ping-pong 64x128 against its diagnostic twins (no epilogue; no loads; neither nor the
# wgmmas - the skeleton; the last stores waited for their smem reads only), launched as their graphs, from one tile
# of one k-block up.
. bench/results/experiments/decode_call_lib.sh
timeout 200 python3 bench/results/experiments/launch_paths.py \
  ag_rota_bf16_pp64_tp1,x_pp64_noepi_tp1,x_pp64_noload_tp1,x_pp64_skel_tp1,x_pp64_endread_tp1 \
  16x128x64,16x128x512,16x2048x512,16x4096x2048 graph > "$R/launch_diag.log" 2>&1
echo "launch_diag rc=$?"
grep -v 'check rel err' "$R/launch_diag.log"
pack
