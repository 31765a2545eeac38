#!/bin/bash
# One device call (nvidia-h200): the side effect of 8f570d0 (reduce-scatter families prefer the wide kernel at TP = 1)
# at few tokens, untimed until now: the new picks (the ping-pong 64x128 at M = 128 through the wave check, the wide
# kernel at 512) against the 128x128 ping-pong and the wide kernel, cuBLASLt and its A/A control beside; then the
# changed llama3-8b attn_out dispatch row through `tpgemm --model llama3-8b --tp 1`. Carry build/bench/local_gemm,
# build/tpgemm, build/libtpgemm.so.
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 260 build/bench/local_gemm --problems 128x2048x4096,70B-o-m128,70B-fc2-m128,70B-o-m512 --dtype bf16 \
  --configs rs_tila_bf16_tp1,rs_tila_bf16_wide_tp1,rs_tila_bf16_pp64_tp1 --aa --budget-s 200 \
  --out $OUT/rs_few.json > $OUT/rs_few.log 2>&1; echo "local_gemm rc=$?"
timeout 120 build/tpgemm --model llama3-8b --tp 1 > $OUT/model_8b_tp1.log 2>&1; echo "model rc=$?"
tail -12 $OUT/model_8b_tp1.log
python3 - "$OUT" <<'PY'
import json, sys
recs = json.load(open(f"{sys.argv[1]}/rs_few.json"))
names = ["rs_tila_bf16_tp1", "rs_tila_bf16_wide_tp1", "rs_tila_bf16_pp64_tp1", "cublasLt", "cublasLt_control"]
print("| problem | " + " | ".join(f"{n} sust (burst)" for n in names) + " | checks |")
print("|---|" + "---|" * (len(names) + 1))
for r in recs:
    v = {x["config"]: x for x in r["variants"]}
    cells = [f"{v[n]['sustained_tflops']:.1f} ({v[n]['burst_tflops']:.1f})" if n in v and v[n].get("sustained_tflops")
             else "-" for n in names]
    print(f"| {r['name']} | " + " | ".join(cells) + f" | {r.get('check')} |")
PY
