#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with the x_sk_gpu kernel (experiments/sk_scope.patch: the stream-K 64x128
# with its flags released and acquired at GPU scope, TPG_SK_GPU_SCOPE=1, instead of system scope): (1) the decode grid
# at M = 16 / 64, N 2048-10240, K 4096-16384: the shipped stream-K 64x128 against that twin and the ping-pong 64x128
# (where the stream-K's fixed cost shows: 16 tiles of 64 k-blocks ran 20.4 us against the ping-pong's 17.3); (2) the
# trace build's timeline of the shipped stream-K and its twin at 16 x 2048 x 4096 and 16 x 5120 x 8192: where a
# fragment's time goes.
. bench/results/experiments/decode_call_lib.sh
grid 200 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_gpu_tp1 16,64:2048,4096,6144,8192,10240:4096,8192,16384
trace sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
trace gpu_2048 --config x_sk_gpu_tp1 --m 16 --n 2048 --k 4096
trace pp_2048 --config ag_rota_bf16_pp64_tp1 --m 16 --n 2048 --k 4096
trace sk_5120 --config ag_rota_bf16_sk64_tp1 --m 16 --n 5120 --k 8192
trace gpu_5120 --config x_sk_gpu_tp1 --m 16 --n 5120 --k 8192
head -30 $R/sk_2048.txt
pack
