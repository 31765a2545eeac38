#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the TP benchmark's new --tokens path, a smoke run with both processes on
# the GPU (times meaningless): 8B-qkv and 70B-o at M = 2048 (the wave check picks ping-pong for 8B-qkv... and the
# K rule ping-pong for 70B-o), checks and the tp2_m2048_shared.json name.
O=/tmp/o; mkdir -p $O
OUT=$O timeout 300 bash bench/run_tp.sh --tp 2 --share-device --tokens 2048 --rounds 1 --window 0.3 --only 8B-qkv,70B-o \
    > $O/tokens_smoke.log 2>&1; echo "rc=$?" >> $O/tokens_smoke.log
ls $O >> $O/tokens_smoke.log
cp $O/tokens_smoke.log $OUT/; cp $O/tp2_m2048_shared.json $OUT/ 2>/dev/null
tail -30 $O/tokens_smoke.log
