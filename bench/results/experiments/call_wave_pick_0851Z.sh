#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the default pick's wave check on a GPU (the device's SM count): the CLI's
# pick and check for 70B-qkv's local GEMM at M = 2048, `tpgemm --model llama3-70b --tp 2 --tokens 2048` with both
# ranks on the GPU (untuned rows picked again for M), and tier 2's quick group at TP = 2 shared.
export PATH="$PATH:/usr/local/cuda/bin"
O=/tmp/o; mkdir -p $O
{
build/tpgemm --schedule AllGather1D_TilingCD_RotatingA --tp 1 --devices 0 --m 2048 --n 5120 --k 8192 --json | tail -1 | cut -c1-220
build/tpgemm --schedule AllGather1D_TilingCD_RotatingA --tp 1 --devices 0 --m 16384 --n 5120 --k 8192 --json | tail -1 | cut -c1-220
build/tpgemm --model llama3-70b --tp 2 --tokens 2048 --share-device; echo "model rc=$?"
} > $O/pick.log 2>&1
OUT=$O/tier2 timeout 200 bash tests/gpu/run_tier2.sh --tp 2 --share-device --quick > $O/tier2_quick.log 2>&1; echo "tier2 rc=$?" >> $O/tier2_quick.log
cp $O/pick.log $O/tier2_quick.log $OUT/
cat $O/pick.log; tail -12 $O/tier2_quick.log
