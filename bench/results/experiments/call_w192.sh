#!/bin/bash
# One device call (1 GPU, ~4 min): the bf16 128x192 tile (4 stages, 4 store buffers) alone and in CTA pairs sharing B
# by multicast (2x1), as x_ configs (`w192.patch` on schedules.yaml), beside the shipped wide kernel, its 2x1 twin,
# cuBLASLt's top algorithm and its best of 8, on the six M >= 8192 problems where cuBLASLt's best of 8 leads most.
# Prediction: at 70B-o (16384 x 8192 x 4096) the wide tile walks 31.03 waves (32 rounds: 3% of them idle) where the
# 128x192 walks 41.7 (43 column tiles of 192 for 8192: 0.8% of the columns empty): ~+1.5% if the smaller tile's
# 11% more operand bytes per FLOP cost nothing at the L2; the 2x1 halves B's share of them. Build here first:
# `git apply bench/results/experiments/w192.patch && python3 -m generator && ninja && ninja bench && cp
# build/bench/local_gemm build/exp/local_gemm_w192` (then `git checkout schedules.yaml generated`); carry
# build/exp/local_gemm_w192.
OUT=${OUT:-build/w192}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
j=$OUT/local_gemm_w192.json
logged "local_gemm bf16 w192" local_gemm.log 330 build/exp/local_gemm_w192 --dtype bf16 --configs \
    ag_rota_bf16_wide_tp1,gemm_bf16_wide_c2x1_tp1,x_w192_tp1,x_w192c2_tp1 \
    --problems 70B-o,gemm-8192,8B-o,70B-fc2,70B-qkv,70B-fc1 --lt-algos 8 --budget-s 300 --out "$j"
tail -9 "$R/local_gemm.log"
python3 -c "
import json, sys
for r in json.load(open(sys.argv[1])):
    c = r['variants'][0]
    print(r['name'], ' '.join('%s %.3f/%.3f/%s' % (v['config'], (v['burst_tflops'] or 0) / c['burst_tflops'],
          (v['sustained_tflops'] or 0) / c['sustained_tflops'], v['check']) for v in r['variants'][1:]))" "$j"
cat "$OUT/summary.txt"
