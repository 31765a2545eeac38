#!/bin/bash
# One device call (1 GPU, ~4 min): the e4m3 128x256x128 in CTA pairs sharing B (2x1) or A (1x2) by TMA multicast,
# as x_ configs (`e4m3_clusters.patch` on schedules.yaml), beside the shipped e4m3 kernels and cuBLASLt on the six
# problems where the fp8 pick trails (2026-12-06 08:51Z section). Build here first: `git apply
# bench/results/experiments/e4m3_clusters.patch && python3 -m generator && ninja bench`; carry build/bench/local_gemm.
OUT=${OUT:-build/e4m3_clusters}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
j=$OUT/local_gemm_e4m3_clusters.json
logged "local_gemm e4m3 clusters" local_gemm.log 330 build/bench/local_gemm --dtype e4m3 --configs \
    gemm_e4m3_wide_tp1,gemm_e4m3_tp1,x_e4m3_c2x1_tp1,x_e4m3_c1x2_tp1 \
    --problems gemm-8192,70B-qkv,70B-fc2,70B-o,8B-o,405B-fc1 --budget-s 300 --out "$j"
tail -9 "$R/local_gemm.log"
python3 -c "
import json, sys
for r in json.load(open(sys.argv[1])):
    c = r['variants'][0]
    print(r['name'], ' '.join('%s %.3f/%.3f/%s' % (v['config'], (v['burst_tflops'] or 0) / c['burst_tflops'],
          (v['sustained_tflops'] or 0) / c['sustained_tflops'], v['check']) for v in r['variants'][1:]))" "$j"
cat "$OUT/summary.txt"
