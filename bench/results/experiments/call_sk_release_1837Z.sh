#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_release.patch (not kept, reverted after this call):
# the stream-K 64x128 raising a contribution's flag 4 k-blocks into its next mainloop, and x_sk_eager, the control
# that raises it right after its stores (TPG_SK_EAGER_RELEASE=1, the shipped behaviour; the 1806Z traces: a
# contribution's store + release ~1.9 us, the warpgroup idle). (1) tier 2's stream_k group at TP = 2 and 4, every rank on the GPU; (2) the decode grid at M = 16 /
# 32 / 64: ping-pong 64x128, stream-K, its eager control; (3) traces of both at 16 x 2048 x 4096.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 60
tier2 4 stream_k 60
grid 200 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_eager_tp1 16,32,64:2048,4096,6144,8192,10240:4096,8192,16384
trace sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
trace eager_2048 --config x_sk_eager_tp1 --m 16 --n 2048 --k 4096
pack
