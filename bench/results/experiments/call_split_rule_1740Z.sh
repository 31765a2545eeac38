#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the shipped stream-K 64x128 (`*_sk64`) and the split rule.
# (1) tier 2's new stream_k group and few_rows, every rank on the GPU at TP = 2, stream_k also at TP = 4 (checks,
# bitwise determinism); (2) the decode grid again with the shipped configs (the stream-K kernel's producer now has 56
# registers; the picks now take it by the split rule); (3) local_gemm --decode: the shipped picks against cuBLASLt,
# sustained (BENCHMARKS.md "Decode").
. bench/results/experiments/decode_call_lib.sh
tier2 2 stream_k,few_rows 150
tier2 4 stream_k 60
grid 150 ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1
local_decode
pack
