#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the reduce-scatter ring proxy with its pushes over the host link
# (`kernel_selftest --rs-far`, new): does a slow link under the stage-0 pushes cost the GEMM what x2 showed (70B-o
# ring 0.938 of local at equal clock) where the plain proxy costs nothing? 70B-o's M, N at K 16k / 32k / 64k a GPU
# (~80 / 40 / 20% of the host link), the shipped ping-pong (pp128tma), the ping-pong with deferred flags (pp128df,
# plain partial loads) and the wide kernel (wide3tma). Carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 400 build/selftest/kernel_selftest --no-perf --no-cases --rs-far --only pp128tma,pp128df,wide3tma \
  > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A14 "^## pushes over the host link" $OUT/rs_far.log
grep -E "FAIL|status=[1-9]" $OUT/rs_far.log | head
