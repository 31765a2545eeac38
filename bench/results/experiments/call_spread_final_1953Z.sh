#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/spread_units.patch: the spread now shipped (one-stage
# launches of at most 3/4 as many units as CTAs, no stream-K region) against its control twins x_pp64_nospread /
# x_pp128_nospread (TPG_SPREAD_UNITS=0). (1) tier 2 at TP = 2 with every rank on the GPU (few-token gathered / one-hop
# walks are one-stage launches: spread too); (2) the whole decode grid (the split rule's evidence, against the spread
# ping-pong); (3) the 128x128 pair at M = 128.
. bench/results/experiments/decode_call_lib.sh
tier2 2 tp,variants,few_rows,stream_k,gathered,one_hop,overlap_barriers 300
grid 200 ag_rota_bf16_pp64_tp1,x_pp64_nospread_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1
timeout 120 python3 bench/results/experiments/decode_grid.py "$R/grid_pp128.json" \
  ag_rota_bf16_tp1,x_pp128_nospread_tp1 16,128:2048,4096,6144,8192,10240,14336:4096,16384 > "$R/grid_pp128.log" 2>&1
echo "grid_pp128 rc=$? $(grep -c 'CHECK FAILED' "$R/grid_pp128.log")"
pack
