#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the committed tree (no patch): tier 2's stream_k and few_rows groups at TP = 2
# with every rank on the GPU, then local_gemm --decode (the ping-pong 64x128 now spread, the stream-K 64x128 with its
# fix-up through the ring, the wide kernel, against cuBLASLt; BENCHMARKS.md "Decode").
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k,few_rows 120
local_decode
pack
