#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the committed tree: what a decode call costs besides B's bytes. (1) the
# decode grid on tiny problems (M 16 / 64, N 128 / 2048, K 64 / 512 / 4096): the ping-pong and stream-K 64x128 and the
# wide kernel against cuBLAS, so a one-tile, one-k-block GEMM shows the fixed cost a call; (2) traces of the stream-K
# at 16 x 2048 x 4096 and the ping-pong at 16 x 128 x 64 (kernel start -> first load -> mainloop -> end).
. bench/results/experiments/decode_call_lib.sh
grid 150 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 16,64:128,2048:64,512,4096
trace sk16_2048_4096 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
trace pp16_128_64 --config ag_rota_bf16_pp64_tp1 --m 16 --n 128 --k 64
trace pp16_2048_4096 --config ag_rota_bf16_pp64_tp1 --m 16 --n 2048 --k 4096
cat "$R/decode_grid.log"
for f in "$R"/*.txt; do echo "== $f"; head -8 "$f"; done
pack
