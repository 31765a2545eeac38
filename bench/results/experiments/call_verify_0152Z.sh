#!/bin/bash
# 2026-12-04 01:52Z, one device call (nvidia-h200, 1 GPU): the tree with paced pushes (every kernel's store handoff
# reads the stage's pace_pushes) and the GPU pytest's counts from tests/gpu/test_epochs.c: tier 2 in full at TP = 2
# and the GPU pytest, every rank on GPU 0 (run_all.sh's tier2 and pytest steps). Carry build/ and .ninja_log.
export PATH="$PATH:/usr/local/cuda/bin"
O=/tmp/o; mkdir -p $O
OUT=$O/all RUN_ALL_BUDGET_S=480 bash tests/gpu/run_all.sh --tp 2 --share-device --skip sanitizers,local_gemm,tp,tune \
  > $O/run_all.log 2>&1
echo "run_all rc=$?" >> $O/run_all.log
cp $O/all/* $OUT/ 2>/dev/null; cp $O/run_all.log $OUT/
tail -10 $O/run_all.log
