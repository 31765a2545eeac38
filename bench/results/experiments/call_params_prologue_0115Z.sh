#!/bin/bash
# 2026-12-04 01:15Z: one device call (nvidia-h200, 1 GPU) running both prepared experiments of 2026-12-03 together
# (params_order.patch and prologue_layout.patch applied, `python3 -m generator && ninja`):
# - the parameters' layout: the patched build's old-prologue twins (x_pp64_oldpro, x_sk64_oldpro: scalars first)
#   against the unpatched build (build/old/libtpgemm.so: stages first), launch_paths.py in processes old/new/new/old,
#   each process with its own cuBLAS as the yardstick;
# - the prologue's layout: in the patched build, ag_rota_bf16_pp64 / sk64 against their old-prologue twins;
# then the stall samples of the new ping-pong at one tile, and tier 2's few-token groups at TP = 2 (shared GPU).
. bench/results/experiments/decode_call_lib.sh
SIZES=16x128x64,16x2048x512,16x4096x2048,16x2048x4096
NEWC=ag_rota_bf16_pp64_tp1,x_pp64_oldpro_tp1,ag_rota_bf16_sk64_tp1,x_sk64_oldpro_tp1
for lib in old new new old; do
  f=build/libtpgemm.so c=$NEWC; [ $lib = old ] && f=build/old/libtpgemm.so c=ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1
  TPGEMM_LIB=$f timeout 90 python3 bench/results/experiments/launch_paths.py $c $SIZES graph \
    >> "$R/launch_paths_$lib.log" 2>&1
  echo "launch_paths $lib rc=$?"
done
stalls pp64_one ag_rota_bf16_pp64_tp1 16 128 64
tier2 2 tp1,stream_k,few_rows,gathered,one_hop 110
for lib in old new; do echo "== $lib"; grep -v 'check rel err' "$R/launch_paths_$lib.log"; done
grep -c 'CHECK FAILED' "$R"/launch_paths_*.log
pack
