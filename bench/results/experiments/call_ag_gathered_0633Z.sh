#!/bin/bash
# One device call (nvidia-h200, 1 GPU): what a gathered all-gather walk would run at - plain's one GEMM of all
# M rows behind the last shard's flag (kernel_selftest --ag-few variants nv1x / copyx, copyx checked bit for bit
# against plain) - beside the walk stage after stage (nv1) and the gated interleaved walk (nv1g), on the 64x128
# and 128x128 ping-pong and the wide 128x256 kernels, M = 128 / 256 / 512, TP = 2 / 4 / 8, four bases.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
v=nv1,nv1g,nv1x,copyx
k=pp64tma,pp128tma,wide3tma
timeout 330 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only $k --variants $v \
  --problem 405B-fc1-m128,70B-fc1-m128,70B-qkv-m128,8B-qkv-m128,405B-fc1-m256,70B-fc1-m256,70B-qkv-m256,8B-qkv-m256 \
  > $OUT/ag_gathered_m128_256.log 2>&1
echo "rc=$?" >> $OUT/ag_gathered_m128_256.log
timeout 200 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only $k --variants $v \
  --problem 405B-fc1-m512,70B-fc1-m512,70B-qkv-m512,8B-qkv-m512 > $OUT/ag_gathered_m512.log 2>&1
echo "rc=$?" >> $OUT/ag_gathered_m512.log
grep -E "^FAIL|\| FAIL|rc=" $OUT/*.log | head -20
grep -E "^\| [0-9]+B-" $OUT/ag_gathered_m128_256.log $OUT/ag_gathered_m512.log
