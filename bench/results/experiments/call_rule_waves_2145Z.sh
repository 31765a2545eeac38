#!/bin/bash
# One device call (nvidia-h200, 1 GPU) after the walk-order rule's second arm (interleaved past one wave at <= 64
# rows a stage, TilingA, not over NCCL): (1) the self-test cases of every instance (the run of all instances failed
# at 21:32Z on the kernel-count limit, now SELFTEST_MAX_KERNELS with a compile-time check; new: a 4-stage, 48-row
# interleaved ring of several waves); (2) ring / plain stage after stage and interleaved at TP = 8 (and a second run
# of TP = 2 / 4) at M = 128-512 for the 64x128 and 128x128 ping-pong rings; (3) tier 2 in full with every rank on
# one GPU at TP = 4 (small-c's ring: 32 units on 31 SMs a rank, now interleaved).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
t0=$(date +%s)
timeout 220 $S --no-perf > $OUT/cases.log 2>&1; echo "rc=$? wall=$(( $(date +%s) - t0 ))s" >> $OUT/cases.log
P=""
for b in 70B-o 70B-fc2 8B-o 405B-fc2; do for m in 128 256 512; do P="$P${P:+,}$b-m$m"; done; done
t0=$(date +%s)
timeout 150 $S --no-perf --no-cases --rs-few --rs-parts --only pp64tma,pp128tma --problem $P > $OUT/rs_minor.log 2>&1
echo "rc=$? wall=$(( $(date +%s) - t0 ))s" >> $OUT/rs_minor.log
mkdir -p $OUT/t2
OUT=$OUT/t2 STEP_BUDGET_S=200 timeout 215 bash tests/gpu/run_tier2.sh --tp 4 --share-device > $OUT/tier2_tp4.log 2>&1
echo "tier2 tp4 rc=$?" >> $OUT/tier2_tp4.log
cp $OUT/t2/tier2_shared_tp4.json $OUT/ 2>/dev/null; rm -rf $OUT/t2
grep -cE "PASS" $OUT/cases.log; grep -E "FAIL|ALL PASSED|failed|stage-minor" $OUT/cases.log | grep -v PASS | tail -20
grep -E "48x24576" $OUT/cases.log | head -8; tail -2 $OUT/cases.log
grep -A40 "ring's parts" $OUT/rs_minor.log | grep "TP 8"; tail -1 $OUT/rs_minor.log
grep -A10 "^group" $OUT/tier2_tp4.log | tail -10; tail -1 $OUT/tier2_tp4.log
