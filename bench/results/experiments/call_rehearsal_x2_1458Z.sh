#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the one-GPU rehearsal of the first x2 call on the tree after the few-token
# work (new configs, the weighted wave check, tpg_config_info.wave_weight read by bench/tpgemm_lib.py): every step of
# tests/gpu/run_all.sh but the local GEMM and tune, tier 2 with every rank on GPU 0 (tier 2's variants and tp1
# groups ran at 14:44Z; here the whole of it), the sanitizers, the GPU pytest and the TP benchmark's multi-process
# smoke (plus `--tokens 128`: the few-token path at M = 128, the ping-pong 64x128 picks).
export PATH="$PATH:/usr/local/cuda/bin"
O=/tmp/o; mkdir -p $O
OUT=$O/all RUN_ALL_BUDGET_S=470 bash tests/gpu/run_all.sh --tp 2 --share-device --skip local_gemm,tune > $O/run_all.log 2>&1
echo "run_all rc=$?" >> $O/run_all.log
OUT=$O/tok timeout 90 bash bench/run_tp.sh --tp 2 --share-device --tokens 128 --rounds 1 --window 0.3 \
    --only 70B-qkv,70B-o > $O/tokens128.log 2>&1
echo "tokens128 rc=$?" >> $O/tokens128.log
cp $O/all/* $OUT/ 2>/dev/null
cp $O/run_all.log $O/tokens128.log $OUT/
tail -30 $O/run_all.log; grep -i "check\|rc=\|config" $O/tokens128.log | tail -8
