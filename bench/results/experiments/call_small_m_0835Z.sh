#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the local GEMM of the 70B layers at M = 2048 and 512 (TP = 2 shards; new
# opt-in problems of bench/args.c) - the shipped TP = 1 bf16 kernels (ping-pong 128x128, cooperative 128x256) and
# three experiments added to schedules.yaml for the run (x_sk_wide: the 128x256 with stream_k; x_coop128:
# cooperative 128x128; x_sk_coop128: the same with stream_k) against cuBLASLt, with the A/A control.
O=/tmp/o; mkdir -p $O
build/bench/local_gemm --dtype bf16 --aa --configs ag_rota_bf16_tp1,ag_rota_bf16_wide_tp1,x_* \
    --problems 70B-fc1-m2048,70B-qkv-m2048,70B-fc2-m2048,70B-o-m2048,70B-fc1-m512,70B-qkv-m512,70B-fc2-m512,70B-o-m512 \
    --budget-s 420 --out $OUT/local_gemm_small_m.json > $O/small_m.log 2>&1
echo "rc=$?" >> $O/small_m.log
cp $O/small_m.log $OUT/
tail -30 $O/small_m.log
