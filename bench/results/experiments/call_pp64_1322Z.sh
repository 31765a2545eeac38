#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the ping-pong 64x128 configs (*_pp64, new, TMA-loaded partials) -
# 1) checked through build/tpgemm (reference, determinism): the bf16 ones at TP = 1, and TP = 2 / 4 / 8 with every
#    rank on this GPU, two fp16 ones at TP = 2, on a shape with partial tiles and on M = 128; 2) the local GEMM (bf16) at M = 128 and where the wave check
#    now picks them at larger M, against ping-pong 128x128, wide and cuBLASLt.
O=/tmp/o; mkdir -p $O
CHK=$O/pp64_checks.log; : > $CHK
for fam in ag_rota_bf16_pp64 ag_rotb_bf16_pp64 rs_tila_bf16_pp64 rs_tilb_bf16_pp64 ag_rota_fp16_pp64 rs_tila_fp16_pp64; do
  case $fam in ag_*) big="1000 10112 768" ;; *) big="1000 8200 1024" ;; esac
  case $fam in *fp16*) tps="2" ;; *) tps="1 2 4 8" ;; esac
  for tp in $tps; do
    for shape in "$big" "128 5120 1024"; do
      set -- $shape
      [ $tp = 1 ] && dev=(--devices 0) || dev=(--share-device)
      out=$(timeout 60 build/tpgemm --config ${fam}_tp$tp --m $1 --n $2 --k $3 --beta 1 --alpha 0.5 \
            --iterations 2 --warmup-iterations 1 --timeout-ms 5000 "${dev[@]}" --json 2>&1); rc=$?
      echo "${fam}_tp$tp $1x$2x$3 rc=$rc $(echo "$out" | grep -o '"check": *"[a-z]*"' | head -1)" >> $CHK
      [ $rc = 0 ] || echo "$out" | tail -5 >> $CHK
    done
  done
done
echo "checks: $(grep -c 'rc=0 "check": "passed"' $CHK) passed of $(grep -c ' rc=' $CHK)"
build/bench/local_gemm --dtype bf16 --configs ag_rota_bf16_tp1,ag_rota_bf16_wide_tp1,ag_rota_bf16_pp64_tp1 --budget-s 140 \
    --problems 1024x7168x8192,2048x3584x4096,70B-qkv-m128,70B-o-m128,256x4096x4096 \
    --out $OUT/local_gemm_pp64.json > $O/pp64_bf16.log 2>&1
echo "rc=$?" >> $O/pp64_bf16.log
cp $O/*.log $OUT/
grep -v 'passed"$' $CHK | cut -c1-200 | head -20
tail -11 $O/pp64_bf16.log
