#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the decode stream-K experiment (PERF_NOTES "Next", first bullet), built with
# experiments/decode_stream_k.patch applied: the stream-K walk on cooperative 128x256 / 128x128 / 64x128 kernels
# (x_*_sk, split-K in effect when tiles < SMs) and the cooperative 64x128 without it (x_c64), against the shipped
# ping-pong 64x128 and wide kernels and cuBLASLt (with an A/A control), on --decode's problems (M = 16 / 64).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
OUT=$OUT/r timeout 540 bench/run_local_gemm.sh --dtype bf16 --aa --budget-s 500 \
  --configs ag_rota_bf16_pp64_tp1,ag_rota_bf16_wide_tp1,x_* --decode > $OUT/r/run_local_gemm.log 2>&1
echo "run_local_gemm rc=$?"
tail -14 $OUT/r/run_local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
