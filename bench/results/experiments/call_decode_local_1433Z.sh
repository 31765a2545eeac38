#!/bin/bash
# One device call (nvidia-h200, 1 GPU; 1433Z): the local GEMM in the decode regime, never measured before - the
# per-GPU GEMMs of the 70B layers at TP = 2 (qkv 5120x8192, fc1 28672x8192, fc2 8192x14336, o 8192x4096) and 8B's
# qkv / o at M = 16 rows, and 70B qkv / o at 64, every shipped TP = 1 bf16 config against cuBLASLt (what the one-hop
# and gathered walks run at few tokens is one such GEMM of all M rows). Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
OUT=$OUT/r timeout 300 bench/run_local_gemm.sh --dtype bf16 --budget-s ${LG_BUDGET_S:-265} \
  --problems 16x5120x8192,16x28672x8192,16x8192x14336,16x8192x4096,16x3072x4096,16x4096x2048,64x5120x8192,64x8192x4096 > $OUT/r/run_local_gemm.log 2>&1
echo "run_local_gemm rc=$?"
tail -16 $OUT/r/run_local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
