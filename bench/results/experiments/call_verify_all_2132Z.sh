#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the first steps of PERF_NOTES "Next" after the interleaved walk (cdf6b4e):
# (1) the self-test cases of every instance (incl. the one-row, one-wave interleaved ring case of 64 x 2048, not yet
# run on a GPU); (2) tier 2 in full with every rank on one GPU at TP = 2 (334 runs with small-c).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
t0=$(date +%s)
timeout 240 $S --no-perf > $OUT/cases.log 2>&1; echo "rc=$? wall=$(( $(date +%s) - t0 ))s" >> $OUT/cases.log
mkdir -p $OUT/t2
OUT=$OUT/t2 STEP_BUDGET_S=270 timeout 300 bash tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "tier2 tp2 rc=$?" >> $OUT/tier2_tp2.log
cp $OUT/t2/tier2_shared_tp2.json $OUT/ 2>/dev/null; rm -rf $OUT/t2
grep -E "FAIL|PASSED|failed" $OUT/cases.log | tail -50; tail -2 $OUT/cases.log
grep -A14 "^group" $OUT/tier2_tp2.log | tail -14; tail -1 $OUT/tier2_tp2.log
