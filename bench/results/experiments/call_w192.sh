#!/bin/bash
# One device call (1 GPU, ~8 min): the bf16 128x192 tile (4 stages, 4 store buffers) - alone and in CTA pairs sharing
# B by multicast (2x1) as x_ configs of the local GEMM (`w192.patch` on schedules.yaml), and with TMA-loaded partials
# in the reduce-scatter ring proxy (`w192_selftest.patch`: self-test instances w192, w192tma).
# Prediction: at 70B-o / 70B-fc2 (16384 x 8192) the wide tile walks 31.03 waves (32 rounds: 3% of them idle) where
# the 128x192 walks 41.7 (43 column tiles of 192 for 8192: 0.8% of the columns empty): ~+1.5% if the smaller tile's
# 11% more operand bytes per FLOP cost nothing at the L2 (the 2x1 halves B's share of them); in the ring (two stages
# of 8192 rows) 15.5 waves of 128x256 (16 rounds) against 20.85 of 128x192 (21). Steps: the self-test's cases of the
# two instances; the ring proxy (`--rs-perf`) at TP = 2 of wide3tma, pp128tma (the shipped _rs kernels) and w192tma;
# the local GEMM against cuBLASLt's top algorithm and its best of 8 on six problems. Build here first:
#   git apply bench/results/experiments/w192.patch bench/results/experiments/w192_selftest.patch
#   python3 -m generator && ninja && ninja bench && cp build/bench/local_gemm build/exp/local_gemm_w192
#   SELFTEST_OUT=build/selftest_w192 bash tests/gpu/kernel_selftest.sh
#   git checkout schedules.yaml generated tests/gpu   # then ninja again; carry build/exp/local_gemm_w192 and
#                                                     # build/selftest_w192/kernel_selftest
OUT=${OUT:-build/w192}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
K=build/selftest_w192/kernel_selftest
logged "self-test cases w192 w192tma" selftest.log 60 $K --no-perf --only w192,w192tma
tail -4 "$R/selftest.log"
logged "rs-perf ring proxy" rs_perf.log 150 $K --no-perf --no-cases --rs-perf --only wide3tma,pp128tma,w192tma \
    --problem 405B-fc2,70B-fc2,70B-o,8B-o
grep "^|" "$R/rs_perf.log"
j=$OUT/local_gemm_w192.json
left=$((540 - $(date +%s) + t0))
logged "local_gemm bf16 w192" local_gemm.log $((left - 10)) build/exp/local_gemm_w192 --dtype bf16 --configs \
    ag_rota_bf16_wide_tp1,gemm_bf16_wide_c2x1_tp1,x_w192_tp1,x_w192c2_tp1 \
    --problems 70B-o,70B-fc2,gemm-8192,8B-o,70B-qkv,70B-fc1 --lt-algos 8 --budget-s $((left - 40)) --out "$j"
tail -9 "$R/local_gemm.log"
python3 -c "
import json, sys
for r in json.load(open(sys.argv[1])):
    c = r['variants'][0]
    print(r['name'], ' '.join('%s %.3f/%.3f/%s' % (v['config'], (v['burst_tflops'] or 0) / c['burst_tflops'],
          (v['sustained_tflops'] or 0) / c['sustained_tflops'], v['check']) for v in r['variants'][1:]))" "$j"
cat "$OUT/summary.txt"
