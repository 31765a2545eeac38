#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the stream-K 64x128 with both fix-up changes kept (only a split tile's own
# rows move; each contributor's flag on its own thread, 1803Z / 1806Z calls), shipped configs only. (1) tier 2's
# stream_k and few_rows groups at TP = 2 and stream_k at TP = 4, every rank on the GPU; (2) the whole decode grid (the
# split rule's evidence, third run); (3) local_gemm --decode, sustained against cuBLASLt (BENCHMARKS.md "Decode").
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
OUT=$R/t2 TIER2_GROUPS=stream_k,few_rows timeout 100 tests/gpu/run_tier2.sh --tp 2 --share-device > $R/tier2_tp2.log 2>&1
echo "tier2 tp2 rc=$?"; tail -4 $R/tier2_tp2.log
OUT=$R/t4 TIER2_GROUPS=stream_k timeout 60 tests/gpu/run_tier2.sh --tp 4 --share-device > $R/tier2_tp4.log 2>&1
echo "tier2 tp4 rc=$?"; tail -3 $R/tier2_tp4.log
timeout 150 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; grep -c "CHECK FAILED" $R/decode_grid.log
OUT=$R/decode timeout 310 bench/run_local_gemm.sh --dtype bf16 --aa --budget-s 285 --decode \
  --configs ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,ag_rota_bf16_wide_tp1 > $R/decode.log 2>&1
echo "decode rc=$?"; tail -12 $R/decode/local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
