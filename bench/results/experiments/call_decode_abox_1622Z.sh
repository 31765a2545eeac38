#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the shipped configs after A's box was trimmed to the launch's rows (no x_
# configs): (1) the decode table of BENCHMARKS.md again - every shipped TP = 1 bf16 config against cuBLASLt on
# --decode's problems (as the 1433Z run, no A/A control); (2) no change at scale: the wide and 128x128 kernels on
# 8192^3 and 8B-o against cuBLASLt (A's box is a whole tile there; the producer's per-tile byte count is the only
# new instruction).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
OUT=$R/decode timeout 330 bench/run_local_gemm.sh --dtype bf16 --budget-s 290 --decode > $R/decode.log 2>&1
echo "decode rc=$?"; grep -E "^\[" $R/decode/local_gemm.log; tail -11 $R/decode/local_gemm.log
OUT=$R/scale timeout 90 bench/run_local_gemm.sh --dtype bf16 --aa --budget-s 80 --problems gemm-8192,8B-o \
  --configs ag_rota_bf16_wide_tp1,ag_rota_bf16_tp1 > $R/scale.log 2>&1
echo "scale rc=$?"; grep -E "^\[" $R/scale/local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
