#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_ring.patch. The 1917Z run: the ring fix-up (count
# wait backing off to 64 ns) 1.020x / 1.013x the register fix-up at M = 16 / 32 but 0.977x at 64 (0.935-0.953 at N =
# 2048). Now the shipped kernel goes through the ring only where a contribution has <= 2 live units (32 rows), else
# its consumers load the units from L2 after one count wait (TPG_SK_RING_UNITS=2); x_sk_ringall always through the
# ring (=4); x_sk_reg the fix-up before (flags, registers). (1) tier 2's stream_k group; (2) memcheck of both paths;
# (3) the decode grid at M = 16 / 32 / 48 / 64.
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k 120
memcheck 16x2048x4096 64x2048x16384 40x1000x8192
grid 400 ag_rota_bf16_sk64_tp1,x_sk_ringall_tp1,x_sk_reg_tp1 16,32,48,64:2048,4096,6144,8192:4096,8192,16384
pack
