#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tier 2's quick group with every rank on GPU 0 (the recorder,
# tests/gpu/tier2_collect.py, was rewritten for the sanitizer runs), then the one-GPU rehearsal of
# tests/gpu/run_all.sh with its new sanitizers step and the GPU pytest.
export PATH="$PATH:/usr/local/cuda/bin"
O=/tmp/o; mkdir -p $O
OUT=$O/tier2 timeout 150 bash tests/gpu/run_tier2.sh --tp 2 --share-device --quick > $O/tier2_quick.log 2>&1
echo "tier2 quick rc=$?" >> $O/tier2_quick.log
OUT=$O/all RUN_ALL_BUDGET_S=400 bash tests/gpu/run_all.sh --tp 2 --share-device --skip tier2,local_gemm,tune,tp > $O/run_all.log 2>&1
echo "run_all rc=$?" >> $O/run_all.log
cp $O/all/sanitizers.json $OUT/ 2>/dev/null
tar -C $O -czf $OUT/logs.tgz .
tail -12 $O/tier2_quick.log; tail -30 $O/run_all.log
