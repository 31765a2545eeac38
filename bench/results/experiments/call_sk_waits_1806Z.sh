#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_waits.patch (x_sk_serial: the stream-K 64x128 whose
# finisher's consumer thread 0 waits for every contributor's flag in turn, TPG_SK_SERIAL_WAITS=1, as before): the
# shipped kernel now waits for them on as many threads at once. The 1803Z traces: a finisher's fix-up ~6 us at 16 x 2048
# x 4096 whether it moved 32 or 8 KB a contributor - latency, not bytes. (1) tier 2's stream_k group at TP = 2, every
# rank on the GPU; (2) the decode grid at M = 16 / 32: ping-pong 64x128, stream-K, its serial-wait control; (3) traces.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 60
grid 200 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_serial_tp1 16,32:2048,4096,6144,8192,10240:4096,8192,16384
trace sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
trace serial_2048 --config x_sk_serial_tp1 --m 16 --n 2048 --k 4096
pack
