#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the interleaved walk beyond one wave. The ring / plain GEMM of the shipped
# ping-pong reduce-scatter kernels (pp64tma: 64x128, pp128tma: 128x128, TMA-loaded partials), stage after stage
# ("ring") and interleaved ("minor", p.stage_minor forced), at M = 128 ... 4096 on the four reduce-scatter bases at
# TP = 2 and 4: where interleaving pays past one wave (lead: a stage's B per rank larger than L2, read once per stage
# stage after stage, once in all interleaved).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
P=""
for b in 70B-o 70B-fc2 8B-o 405B-fc2; do for m in 128 256 512 1024 2048 4096; do P="$P${P:+,}$b-m$m"; done; done
t0=$(date +%s)
timeout 420 $S --no-perf --no-cases --rs-few --rs-parts --only pp64tma,pp128tma --problem $P > $OUT/rs_minor.log 2>&1
echo "rc=$? wall=$(( $(date +%s) - t0 ))s" >> $OUT/rs_minor.log
grep -E "^\| (problem|[0-9]+B)" $OUT/rs_minor.log | head -120; tail -1 $OUT/rs_minor.log
