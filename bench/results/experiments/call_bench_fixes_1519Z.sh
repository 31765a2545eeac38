#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the review fixes of 2026-12-02 15:00Z-15:19Z on a GPU, every rank on one GPU
# (times meaningless): 1) the TP benchmark - windows sized past 2000 calls, a failing experiment variant dropped alone,
# --tag and the p2p_off tag (own files and section), the run's stem in $OUT/.tp_stem for run_tp.sh's logs and
# table; 2) run_all.sh's sanitizers step with budgets from its step (STEP_BUDGET_S) and its reordered job list.
export PATH="$PATH:/usr/local/cuda/bin"
O=/tmp/o; mkdir -p $O/tp
A=(--tp 2 --share-device --rounds 1 --window 0.3 --only 8B-o,8B-qkv)
OUT=$O/tp timeout 150 bash bench/run_tp.sh "${A[@]}" --alt-overlap-barriers --alt-captured --alt-nccl \
    > $O/tp_alts.log 2>&1; echo "tp alts rc=$?" >> $O/tp_alts.log
OUT=$O/tp NCCL_P2P_DISABLE=1 timeout 120 bash bench/run_tp.sh "${A[@]}" --alt-nccl > $O/tp_p2p_off.log 2>&1
echo "tp p2p_off rc=$?" >> $O/tp_p2p_off.log
OUT=$O/tp timeout 120 bash bench/run_tp.sh "${A[@]}" --tokens 128 --tag smoke > $O/tp_tag.log 2>&1
echo "tp tag rc=$?" >> $O/tp_tag.log
ls -la $O/tp > $O/tp_files.log
OUT=$O/all RUN_ALL_BUDGET_S=200 bash tests/gpu/run_all.sh --tp 2 --share-device --skip tier2,pytest,local_gemm,tp,tune \
    > $O/run_all.log 2>&1; echo "run_all rc=$?" >> $O/run_all.log
cat $O/tp_files.log $O/tp_alts.log $O/tp_p2p_off.log $O/tp_tag.log $O/run_all.log > $OUT/call.log
cp $O/tp/*.json $OUT/ 2>/dev/null
cat $O/tp_files.log; for f in tp_alts tp_p2p_off tp_tag; do echo "== $f"; grep -E "^[0-9A-Za-z-]+: |alt |rc=|windows of|Error|rror" $O/$f.log | cut -c1-220 | tail -14; done
tail -12 $O/run_all.log
