#!/bin/bash
# Prepared 2026-12-03 23:21Z, not yet run (the session's device time was spent): one device call (nvidia-h200,
# 1 GPU), the GEMM parameters with their scalars first and the 6 KiB of stages last (`git apply
# bench/results/experiments/params_order.patch && ninja`) against the layout without it (build/old/libtpgemm.so, the
# same tree unpatched, built in a worktree and copied there), launch_paths.py in four processes, old / new / new / old;
# then tier 2's TP = 1, stream-K, few-row, gathered and one-hop groups at TP = 2 with both ranks on the GPU (the
# layout is the runtime's and every kernel's). Name the call by its start time when it runs.
. bench/results/experiments/decode_call_lib.sh
SIZES=16x128x64,16x2048x512,16x4096x2048,16x2048x4096
for lib in old new new old; do
  f=build/libtpgemm.so; [ $lib = old ] && f=build/old/libtpgemm.so
  TPGEMM_LIB=$f timeout 60 python3 bench/results/experiments/launch_paths.py \
    ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1 $SIZES graph >> "$R/launch_paths_$lib.log" 2>&1
  echo "launch_paths $lib rc=$?"
done
tier2 2 tp1,stream_k,few_rows,gathered,one_hop 110
for lib in old new; do echo "== $lib"; grep -v 'check rel err' "$R/launch_paths_$lib.log"; done
grep -c 'CHECK FAILED' "$R"/launch_paths_*.log
pack
