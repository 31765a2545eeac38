#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the shipped stream-K 64x128 (`*_sk64`) and the split rule.
# (1) tier 2's new stream_k group and few_rows, every rank on the GPU at TP = 2, stream_k also at TP = 4 (checks,
# bitwise determinism); (2) the decode grid again with the shipped configs (the stream-K kernel's producer now has 56
# registers; the picks now take it by the split rule); (3) local_gemm --decode: the shipped picks against cuBLASLt,
# sustained (BENCHMARKS.md "Decode").
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
OUT=$R/t2 TIER2_GROUPS=stream_k,few_rows timeout 150 tests/gpu/run_tier2.sh --tp 2 --share-device > $R/tier2_tp2.log 2>&1
echo "tier2 tp2 rc=$?"; tail -6 $R/tier2_tp2.log
OUT=$R/t4 TIER2_GROUPS=stream_k timeout 60 tests/gpu/run_tier2.sh --tp 4 --share-device > $R/tier2_tp4.log 2>&1
echo "tier2 tp4 rc=$?"; tail -4 $R/tier2_tp4.log
timeout 150 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; grep -c CHECK $R/decode_grid.log
OUT=$R/decode timeout 310 bench/run_local_gemm.sh --dtype bf16 --aa --budget-s 285 --decode \
  --configs ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 > $R/decode.log 2>&1
echo "decode rc=$?"; grep -E "^\[" $R/decode/local_gemm.log | head -3; tail -12 $R/decode/local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
