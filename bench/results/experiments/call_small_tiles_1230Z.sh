#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the local GEMM of the 70B layers at few tokens (M = 2048, 512, 128;
# TP = 2 shards, opt-in problems of bench/args.c), bf16: the shipped ping-pong 128x128, wide 128x256 and its 2x1
# cluster against cuBLASLt, plus experiments added to schedules.yaml for the run (x_configs.patch): cooperative
# 128x160 and 128x192, each also in a 2x1 cluster, and the wide kernel with stream-K. Then Nsight Compute names
# the kernel (and grid) cuBLASLt runs on the sub-wave problems.
O=/tmp/o; mkdir -p $O
P=70B-qkv-m2048,70B-fc1-m512,70B-qkv-m512,70B-o-m512,70B-qkv-m128,70B-fc1-m128,70B-fc2-m128,70B-o-m128
build/bench/local_gemm --dtype bf16 --configs ag_rota_bf16_tp1,ag_rota_bf16_wide_tp1,gemm_bf16_wide_c2x1_tp1,x_* \
    --problems $P --budget-s 400 --out $OUT/local_gemm_small_tiles.json > $O/small_tiles.log 2>&1
echo "rc=$?" >> $O/small_tiles.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for p in 70B-qkv-m512 70B-qkv-m128 70B-o-m128 70B-fc1-m128 70B-qkv-m2048; do
  echo "== $p" >> $O/ncu_names.txt
  timeout 60 $NCU --clock-control none -k regex:'nvjet|xmma|cutlass|gemm_sm90' --launch-count 4 \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size \
    build/bench/local_gemm --problems $p --dtype bf16 --configs x_c160_tp1 --burst-ms 1 --sustained-s 1 --cool-s 1 \
    2>&1 | grep -E "nvjet|xmma|cutlass|gemm_sm90|duration|grid_size|block_size" >> $O/ncu_names.txt
done
cp $O/*.log $O/*.txt $OUT/ 2>/dev/null
cat $O/ncu_names.txt | cut -c1-200 | head -60
tail -22 $O/small_tiles.log
