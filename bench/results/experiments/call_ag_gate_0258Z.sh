#!/bin/bash
# One device call (nvidia-h200, 1 GPU; the only kind lent): the gated interleaved all-gather walk at few tokens
# (kernel_selftest --ag-few; new variants nv1g / copyg: every stage waiting on the last shard's flag; nv1gp / copygp:
# and B prefetched into L2 during the first unit's wait) on the 64x128 at M = 128 and 256, three bases with B >= 40
# MiB a stage, TP = 2 / 4 / 8; then tier 2 in full with the ranks of TP = 2 on one GPU, with the runtime's gated
# all-gather arm (params.c).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
timeout 150 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only pp64tma \
  --problem 70B-fc1-m128,405B-fc1-m128,70B-qkv-m128 > $OUT/ag_gate_m128.log 2>&1
echo "rc=$?" >> $OUT/ag_gate_m128.log
timeout 180 build/selftest/kernel_selftest --no-perf --no-cases --ag-few --only pp64tma \
  --problem 70B-fc1-m256,405B-fc1-m256,70B-qkv-m256 > $OUT/ag_gate_m256.log 2>&1
echo "rc=$?" >> $OUT/ag_gate_m256.log
STEP_BUDGET_S=210 timeout 250 tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "rc=$?" >> $OUT/tier2_tp2.log
cp build/tier2/tier2_shared_tp2.json $OUT/ 2>/dev/null
grep -E "FAIL|rc=" $OUT/*.log | head -20
tail -3 $OUT/tier2_tp2.log
grep -E "^\| [0-9]+B-" $OUT/ag_gate_m128.log $OUT/ag_gate_m256.log
