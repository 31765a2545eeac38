#!/bin/bash
# One device call (nvidia-h200, 1 GPU): where the gated all-gather walk stops paying - the 128x128 ping-pong and
# the wide cooperative 128x256 at M = 256 and 512 (and the 64x128 at 512), TP = 2 / 4 / 8, three bases
# (kernel_selftest --ag-few: plain, minor, nv1, nv1g, copyg); then tier 2 in full with the ranks of TP = 4 on one
# GPU (the runtime's gated arm: pp64 all-gathers of <= 64 rows and >= 32 MiB of B a stage, small-d among them).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
timeout 100 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only pp128tma,wide3tma \
  --problem 70B-fc1-m256,405B-fc1-m256,70B-qkv-m256 > $OUT/ag_gate_m256.log 2>&1
echo "rc=$?" >> $OUT/ag_gate_m256.log
timeout 140 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only pp128tma,wide3tma,pp64tma \
  --problem 70B-fc1-m512,405B-fc1-m512,70B-qkv-m512 > $OUT/ag_gate_m512.log 2>&1
echo "rc=$?" >> $OUT/ag_gate_m512.log
STEP_BUDGET_S=260 timeout 280 tests/gpu/run_tier2.sh --tp 4 --share-device > $OUT/tier2_tp4.log 2>&1
echo "rc=$?" >> $OUT/tier2_tp4.log
cp build/tier2/tier2_shared_tp4.json $OUT/ 2>/dev/null
grep -E "^FAIL|rc=" $OUT/*.log | head -20
grep -c "^PASS" $OUT/tier2_tp4.log
grep -E "^\| [0-9]+B-" $OUT/ag_gate_m256.log $OUT/ag_gate_m512.log
