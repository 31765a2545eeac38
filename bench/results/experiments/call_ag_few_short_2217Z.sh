#!/bin/bash
# One device call (nvidia-h200, 1 GPU; the machine of call_ag_few_2211Z.sh still warm, 155 s of budget left): that
# call's all-gather proxy ran past its 250 s bound before printing its table, so the same at M = 128 only, for the
# 64x128 and 128x128 ping-pong kernels, on 405B-fc1, 70B-fc1 and 70B-qkv at TP = 2, 4 and 8.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 110 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only pp64tma,pp128tma \
  --problem 70B-fc1-m128,405B-fc1-m128,70B-qkv-m128 > $OUT/ag_few_short.log 2>&1
echo "rc=$?" >> $OUT/ag_few_short.log
grep -E "^\| [0-9]+B-|FAIL" $OUT/ag_few_short.log; tail -1 $OUT/ag_few_short.log
