#!/bin/bash
# One device call (nvidia-h200): the reduce-scatter families' TP = 1 pick (prefer_from_local_k_tp1, 2026-12-04-f):
# the wide config (now the pick at every K) against the ping-pong one (the pick below K 10240 before), sustained, on
# the problems of K < 10240 and the 8B attn_out layer at TP = 1 (8192 x 4096 x 4096, a dispatch row that changed),
# bf16 and fp16, cuBLASLt and its A/A control beside. Carry build/bench/local_gemm.
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
P=70B-fc1,70B-qkv,8B-qkv,70B-o,8B-o,8192x4096x4096
for dt in bf16 fp16; do
  timeout 280 build/bench/local_gemm --problems $P --configs rs_tila_${dt}_tp1,rs_tila_${dt}_wide_tp1 --dtype $dt --aa \
    --budget-s 250 --out $OUT/rs_tp1_$dt.json > $OUT/rs_tp1_$dt.log 2>&1; echo "$dt rc=$?"
done
python3 - "$OUT" <<'PY'
import json, sys
for dt in ("bf16", "fp16"):
    try: recs = json.load(open(f"{sys.argv[1]}/rs_tp1_{dt}.json"))
    except Exception as e: print(dt, "no json", e); continue
    print(f"| problem | dtype | pp burst | wide burst | wide/pp burst | pp sust | wide sust | wide/pp sust | wide/pp J | A/A sust |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in recs:
        v = {x["config"]: x for x in r["variants"]}
        pp, wd, c, cc = v[f"rs_tila_{dt}_tp1"], v[f"rs_tila_{dt}_wide_tp1"], v["cublasLt"], v["cublasLt_control"]
        print(f"| {r['name']} | {dt} | {pp['burst_tflops']:.1f} | {wd['burst_tflops']:.1f} | "
              f"{wd['burst_tflops'] / pp['burst_tflops']:.3f} | {pp['sustained_tflops']:.1f} | {wd['sustained_tflops']:.1f} | "
              f"{wd['sustained_tflops'] / pp['sustained_tflops']:.3f} | {wd['joules'] / pp['joules']:.3f} | "
              f"{cc['sustained_tflops'] / c['sustained_tflops']:.3f} |")
PY
