#!/bin/bash
# One device call (nvidia-h200): the e4m3 reduce-scatter families' TP = 1 preference (prefer_from_local_k_tp1: 8192,
# 2026-12-04-f, taken from gemm_e4m3_wide's measured rule): the wide config against the ping-pong one at K 2048-8192,
# sustained, cuBLASLt (fast accumulation) and its A/A control beside. Carry build/bench/local_gemm.
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 280 build/bench/local_gemm --problems 70B-fc1,70B-qkv,8B-qkv,70B-o,8B-o --configs rs_tila_e4m3_tp1,rs_tila_e4m3_wide_tp1 \
  --dtype e4m3 --aa --budget-s 250 --out $OUT/rs_tp1_e4m3.json > $OUT/rs_tp1_e4m3.log 2>&1; echo "e4m3 rc=$?"
python3 - "$OUT" <<'PY'
import json, sys
recs = json.load(open(f"{sys.argv[1]}/rs_tp1_e4m3.json"))
print("| problem | K | pp sust | wide sust | wide/pp sust | wide/pp burst | wide/pp J | A/A sust |")
print("|---|---|---|---|---|---|---|---|")
for r in recs:
    v = {x["config"]: x for x in r["variants"]}
    pp, wd, c, cc = v["rs_tila_e4m3_tp1"], v["rs_tila_e4m3_wide_tp1"], v["cublasLt"], v["cublasLt_control"]
    print(f"| {r['name']} | {r['K']} | {pp['sustained_tflops']:.1f} | {wd['sustained_tflops']:.1f} | "
          f"{wd['sustained_tflops'] / pp['sustained_tflops']:.3f} | {wd['burst_tflops'] / pp['burst_tflops']:.3f} | "
          f"{wd['joules'] / pp['joules']:.3f} | {cc['sustained_tflops'] / c['sustained_tflops']:.3f} |")
PY
tail -9 $OUT/rs_tp1_e4m3.log
