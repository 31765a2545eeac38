#!/bin/bash
# Prepared 2026-12-03 23:50Z, not yet run (the session's device time was spent): one device call (nvidia-h200,
# 1 GPU), built with experiments/prologue_layout.patch (`git apply ... && python3 -m generator && ninja`): the
# kernel's start rearranged - the gathered walk's pulls as the unlikely branch, the register split before the roles
# split - against twins with the old layout (x_pp64_oldpro, x_sk64_oldpro; TPG_DIAG_OLD_PROLOGUE), launch_paths.py
# at one tile and decode sizes; then the stall samples of the new ping-pong at one tile (does the jump to the
# producer's code, and its instruction-cache miss before the consumers' register allocation, go away?), and tier
# 2's few-token groups at TP = 2 with both ranks on the GPU. Name the call by its start time when it runs.
. bench/results/experiments/decode_call_lib.sh
timeout 120 python3 bench/results/experiments/launch_paths.py \
  ag_rota_bf16_pp64_tp1,x_pp64_oldpro_tp1,ag_rota_bf16_sk64_tp1,x_sk64_oldpro_tp1 \
  16x128x64,16x2048x512,16x4096x2048,16x2048x4096 graph > "$R/launch_paths.log" 2>&1; echo "launch_paths rc=$?"
stalls pp64_one ag_rota_bf16_pp64_tp1 16 128 64
tier2 2 tp1,stream_k,few_rows,gathered,one_hop 110
grep -v 'check rel err' "$R/launch_paths.log"; grep -c 'CHECK FAILED' "$R/launch_paths.log"
pack
