#!/bin/bash
# One device call (nvidia-h200, 1 GPU): stream-K (`stream_k: true`, the whole sub-wave walk in the region) at few
# tokens, as x_ entries (x_configs.patch): cooperative 128x64 / 128x128 / 128x160 / 128x256 against the shipped
# ping-pong 64x128 (the wave check's pick at M = 128) and cuBLASLt; 1) checked through build/tpgemm; 2) timed.
O=/tmp/o; mkdir -p $O
CHK=$O/sk_checks.log; : > $CHK
for cfg in x_sk64_tp1 x_sk128_tp1 x_sk160_tp1 x_sk256_tp1; do
  for shape in "128 10240 8192" "128 5120 8192" "100 8200 1000"; do
    set -- $shape
    out=$(timeout 60 build/tpgemm --config $cfg --m $1 --n $2 --k $3 --beta 1 --alpha 0.5 \
          --iterations 3 --warmup-iterations 1 --timeout-ms 5000 --devices 0 --json 2>&1); rc=$?
    echo "$cfg $1x$2x$3 rc=$rc $(echo "$out" | grep -o '"check": *"[a-z]*"' | head -1)" >> $CHK
    [ $rc = 0 ] || echo "$out" | tail -5 >> $CHK
  done
done
echo "checks: $(grep -c 'rc=0 "check": "passed"' $CHK) passed of $(grep -c ' rc=' $CHK)"
build/bench/local_gemm --dtype bf16 --configs ag_rota_bf16_pp64_tp1,x_sk64_tp1,x_sk128_tp1,x_sk160_tp1,x_sk256_tp1 \
    --problems 70B-qkv-m128,128x5120x8192,70B-o-m128,70B-fc2-m128,70B-qkv-m512 --budget-s 330 \
    --out $OUT/local_gemm_sk_m128.json > $O/sk_bf16.log 2>&1
echo "rc=$?" >> $O/sk_bf16.log
cat $CHK $O/sk_bf16.log > $OUT/call.log
cat $CHK | cut -c1-160
tail -9 $O/sk_bf16.log
