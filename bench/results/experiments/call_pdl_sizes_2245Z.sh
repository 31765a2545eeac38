#!/bin/bash
# One device call (nvidia-h200, 1 GPU): is PDL (tpg_op_set_pdl) still slower on big GEMMs with the settled method
# (--aa, counterbalanced; the 2026-12-01 finding predates it)? local_gemm --pdl-ab on the short-K anchors where it lost
# then, the wide kernel; then launch_paths.py (graph against direct PDL launch) from decode sizes up to M = 512.
. bench/results/experiments/decode_call_lib.sh
OUT=$R/local timeout 200 bench/run_local_gemm.sh --dtype bf16 --pdl-ab --aa --problems 8B-o,gemm-4096,70B-qkv,8B-qkv \
  --configs ag_rota_bf16_wide_tp1 --budget-s 170 > "$R/local.log" 2>&1; echo "local rc=$?"
timeout 200 python3 bench/results/experiments/launch_paths.py \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 \
  16x28672x8192,16x8192x14336,64x8192x4096,128x8192x4096,128x28672x8192,512x8192x8192 > "$R/launch_paths.log" 2>&1
echo "launch_paths rc=$?"
grep -v 'check rel err' "$R/launch_paths.log"; grep -c 'CHECK FAILED' "$R/launch_paths.log"
tail -12 "$R/local/local_gemm.log"
pack
