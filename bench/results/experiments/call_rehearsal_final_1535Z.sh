#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the one-GPU rehearsal of the first x2 call on the session's final tree (after the
# review fixes: budgets from the step, the sanitizers' job order, the GPU pytest's across-GPU cases at TP = 2 / 4 / 8):
# every step of tests/gpu/run_all.sh but the local GEMM and tune, every rank on GPU 0.
export PATH="$PATH:/usr/local/cuda/bin"
O=/tmp/o; mkdir -p $O
OUT=$O/all RUN_ALL_BUDGET_S=480 bash tests/gpu/run_all.sh --tp 2 --share-device --skip local_gemm,tune > $O/run_all.log 2>&1
echo "run_all rc=$?" >> $O/run_all.log
cp $O/all/* $OUT/ 2>/dev/null; cp $O/run_all.log $OUT/
tail -14 $O/run_all.log
