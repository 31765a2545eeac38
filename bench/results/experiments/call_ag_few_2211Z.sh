#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the all-gather at few tokens. (1) The all-gather proxy (`kernel_selftest
# --ag-few`, new): plain GEMM against the fused walk stage after stage and interleaved (minor; nv1 / nv1m with the
# shards copied in NVLink's time; copym copied whole over PCIe and checked bit for bit against plain) at M = 128 /
# 256 on the all-gather anchors at TP = 2, 4, 8, for the 64x128 and 128x128 ping-pong and the wide kernels. (2) The
# walk-order rule's all-gather arm (interleaved at <= 64 rows and >= 32 MiB of B a stage) through the runtime: tier
# 2's tp2 / tp4 groups with every rank on one GPU (small-d's all-gather: 64 / 32 rows, 64 / 32 MiB of B a stage).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
P=""
for b in 405B-fc1 70B-fc1 70B-qkv 8B-qkv; do for m in 128 256; do P="$P${P:+,}$b-m$m"; done; done
t0=$(date +%s)
timeout 250 $S --no-perf --no-cases --ag-few --only pp64tma,pp128tma,wide3tma --problem $P > $OUT/ag_few.log 2>&1
echo "rc=$? wall=$(( $(date +%s) - t0 ))s" >> $OUT/ag_few.log
for tp in 2 4; do
  mkdir -p $OUT/t2
  OUT=$OUT/t2 TIER2_GROUPS=tp$tp STEP_BUDGET_S=100 timeout 110 bash tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?" >> $OUT/tier2_tp$tp.log; rm -rf $OUT/t2
  grep -E "small-d/All" $OUT/tier2_tp$tp.log; grep -A2 "^group" $OUT/tier2_tp$tp.log; tail -1 $OUT/tier2_tp$tp.log
done
grep -E "FAIL|diff=[1-9]" $OUT/ag_few.log | head; grep -E "^\| [0-9]+B-" $OUT/ag_few.log; tail -1 $OUT/ag_few.log
