#!/bin/bash
# One device call (nvidia-h200, 1 GPU): 64-column and 64-row tiles at M = 128 (the 70B layers at TP = 2, one row of
# 128-row tiles), bf16, as x_ entries for the run (x_configs.patch): cooperative 128x64, ping-pong 64x128, 64x64 and
# 64x160, against ping-pong 128x128, wide 128x256, 128x160 and cuBLASLt; two larger problems to see them where
# the shipped tiles fill their waves.
O=/tmp/o; mkdir -p $O
build/bench/local_gemm --dtype bf16 --configs ag_rota_bf16_tp1,ag_rota_bf16_wide_tp1,ag_rota_bf16_w160_tp1,x_* \
    --problems 70B-qkv-m128,70B-fc1-m128,70B-fc2-m128,70B-o-m128,70B-o-m512,256x10240x8192 \
    --out $OUT/local_gemm_m128_tiles.json > $O/m128_tiles.log 2>&1
echo "rc=$?" >> $O/m128_tiles.log
cp $O/*.log $OUT/
tail -12 $O/m128_tiles.log
