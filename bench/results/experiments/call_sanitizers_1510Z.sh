#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the tree after the copy-engine row counts (0a249ad / 63e6709: every shipped
# kernel's epilogue gained tpg_epi_count_row) under the sanitizers for the first time - run_sanitizers.sh as run_all.sh
# runs it with both ranks on one GPU (canary, every TP = 1 kernel binary under racecheck / synccheck / initcheck, the
# self-test's partial-reading rings under racecheck) - and the whole self-test's default run (--no-perf).
# Carry build/tpgemm, build/tests/gpu_racecheck_canary, build/selftest/kernel_selftest, build/exp/ce_chain_cost.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
mkdir -p $OUT/san
OUT=$OUT/san STEP_BUDGET_S=330 timeout 360 bash tests/gpu/run_sanitizers.sh --tp 2 --share-device > $OUT/sanitizers.log 2>&1
echo "sanitizers rc=$?" >> $OUT/sanitizers.log
cp $OUT/san/sanitizers.json $OUT/ 2>/dev/null; rm -rf $OUT/san
timeout 200 build/selftest/kernel_selftest --no-perf > $OUT/selftest.log 2>&1
echo "selftest rc=$?" >> $OUT/selftest.log
grep -v "\[PASS\]" $OUT/selftest.log | tail -15
grep -c "\[PASS\]" $OUT/selftest.log
tail -25 $OUT/sanitizers.log
# ce_chain_cost after its peer destination was added (2026-12-04-f): on one GPU the two destinations as before
timeout 120 build/exp/ce_chain_cost > $OUT/ce_chain_cost.md 2>&1; echo "ce_chain_cost rc=$?" >> $OUT/ce_chain_cost.md
cat $OUT/ce_chain_cost.md
