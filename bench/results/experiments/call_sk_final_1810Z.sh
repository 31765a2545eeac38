#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the stream-K 64x128 with both fix-up changes kept (only a split tile's own
# rows move; each contributor's flag on its own thread, 1803Z / 1806Z calls), shipped configs only. (1) tier 2's
# stream_k and few_rows groups at TP = 2 and stream_k at TP = 4, every rank on the GPU; (2) the whole decode grid (the
# split rule's evidence, third run); (3) local_gemm --decode, sustained against cuBLASLt (BENCHMARKS.md "Decode").
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k,few_rows 100
tier2 4 stream_k 60
grid 150 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1
local_decode
pack
