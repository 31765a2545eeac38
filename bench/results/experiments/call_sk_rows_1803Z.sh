#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_rows.patch (x_sk_allrows: the stream-K 64x128 as
# shipped at 17:40Z, every row of a split tile's sums moved, TPG_SK_ALL_ROWS=1): the shipped kernel now moves only the
# rows of a split tile that exist (at M = 16 one warp's of four). (1) tier 2's stream_k group (now also 40 rows in
# two batches) at TP = 2 and 4, every rank on the GPU; (2) the decode grid at M = 16 / 32 / 64, N 2048-10240, K
# 4096-16384: ping-pong 64x128, the stream-K with its rows only, the all-rows control; (3) the trace build's
# timeline of the new stream-K at 16 x 2048 x 4096 and 16 x 5120 x 8192 (the 1754Z call's fix-up: 6-6.7 us a finisher).
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 60
tier2 4 stream_k 60
grid 200 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_allrows_tp1 16,32,64:2048,4096,6144,8192,10240:4096,8192,16384
trace sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
trace all_2048 --config x_sk_allrows_tp1 --m 16 --n 2048 --k 4096
trace sk_5120 --config ag_rota_bf16_sk64_tp1 --m 16 --n 5120 --k 8192
trace all_5120 --config x_sk_allrows_tp1 --m 16 --n 5120 --k 8192
pack
