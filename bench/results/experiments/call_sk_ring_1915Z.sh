#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_ring.patch (x_sk_reg: the stream-K 64x128 whose
# finisher's consumers read each contributor's sums into registers from L2, one round trip a contributor, as before,
# TPG_SK_REG_FIXUP=1): the shipped kernel's producer now waits for the tile's count of contributions after the
# fragment's loads and bulk-copies them into the ring, where they land during the fragment's mainloop.
# (1) tier 2's stream_k group at TP = 2 (TP = 1 runs included; new: 64 x 2048 x 16384, the contributions filling the
# ring more than once), every rank on the GPU; (2) memcheck of the new path; (3) the decode grid at M = 16 / 32 / 64:
# ping-pong 64x128, stream-K, its register-fix-up control; (4) traces.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 120
memcheck 16x2048x4096 64x2048x16384 40x1000x8192
grid 300 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_reg_tp1 16,32,64:2048,4096,6144,8192,10240:4096,8192,16384
trace ring_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
trace reg_2048 --config x_sk_reg_tp1 --m 16 --n 2048 --k 4096
pack
