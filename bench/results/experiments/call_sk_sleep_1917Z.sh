#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_ring.patch: the ring fix-up (1915Z: 1.07x the
# register fix-up at 16 x 2048 x 4096, 0.90-0.99x at M = 32 / 64) with the producer's count wait backing off to at most
# 64 ns (shipped now) against 1024 ns (x_sk_sleep1024, the 1915Z kernel) and the register fix-up (x_sk_reg).
# (1) tier 2's stream_k group; (2) the decode grid at M = 16 / 32 / 64; (3) traces at M = 64.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 120
grid 300 ag_rota_bf16_sk64_tp1,x_sk_sleep1024_tp1,x_sk_reg_tp1 16,32,64:2048,4096,6144,8192:4096,8192,16384
trace ring64_2048 --config ag_rota_bf16_sk64_tp1 --m 64 --n 2048 --k 4096
trace reg64_2048 --config x_sk_reg_tp1 --m 64 --n 2048 --k 4096
pack
