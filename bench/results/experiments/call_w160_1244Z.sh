#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the cooperative 128x160 configs (ag_*_w160, new) -
# 1) every one of them checked (reference, determinism) through build/tpgemm: TP = 1, and TP = 2 / 4 / 8 with
#    every rank on this GPU (--share-device), on shapes with partial tiles;
# 2) the local GEMM (bf16) at the shapes where the wave check's pick changes with them, against the ping-pong
#    and wide configs and cuBLASLt; 3) fp16 on two of them.
O=/tmp/o; mkdir -p $O
CHK=$O/w160_checks.log; : > $CHK
for fam in ag_rota_bf16_w160 ag_rotb_bf16_w160 ag_rota_fp16_w160 ag_rotb_fp16_w160; do
  for tp in 1 2 4 8; do
    for shape in "2048 57344 1024" "1000 10112 768"; do
      set -- $shape
      [ $tp = 1 ] && dev=(--devices 0) || dev=(--share-device)
      out=$(timeout 120 build/tpgemm --config ${fam}_tp$tp --m $1 --n $2 --k $3 --beta 1 --alpha 0.5 \
            --iterations 3 --warmup-iterations 1 --timeout-ms 5000 "${dev[@]}" --json 2>&1); rc=$?
      echo "${fam}_tp$tp $1x$2x$3 rc=$rc $(echo "$out" | grep -o '"check": *"[a-z]*"' | head -1)" >> $CHK
      [ $rc = 0 ] || echo "$out" | tail -5 >> $CHK
    done
  done
done
echo "checks: $(grep -c 'rc=0' $CHK) ok of $(grep -c ' rc=' $CHK)"
P=256x28672x4096,1024x7168x8192,2048x3584x4096,1024x5120x8192,2048x2560x8192,256x10240x8192,1024x9216x16384,2048x4608x16384,512x9216x16384
build/bench/local_gemm --dtype bf16 --configs ag_rota_bf16_tp1,ag_rota_bf16_wide_tp1,ag_rota_bf16_w160_tp1 \
    --problems $P --out $OUT/local_gemm_w160.json > $O/w160_bf16.log 2>&1
echo "rc=$?" >> $O/w160_bf16.log
timeout 100 build/bench/local_gemm --dtype fp16 --configs ag_rota_fp16_tp1,ag_rota_fp16_wide_tp1,ag_rota_fp16_w160_tp1 \
    --problems 70B-qkv-m512,1024x5120x8192 --out $OUT/local_gemm_w160_fp16.json > $O/w160_fp16.log 2>&1
echo "rc=$?" >> $O/w160_fp16.log
cp $O/*.log $OUT/
cat $CHK | cut -c1-160
tail -12 $O/w160_bf16.log; tail -4 $O/w160_fp16.log
