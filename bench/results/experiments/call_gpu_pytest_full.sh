#!/bin/bash
# One device call (1 GPU, ~6 min): the whole GPU pytest on one GPU (TPG_REQUIRE_GPUS=1: a case that needs one GPU fails
# rather than skips) on the tree after the 2026-12-06 host changes that only their own cases had run on a GPU: the
# copy barrier's removal (graph.c, ce_partials.c), the NCCL wait that aborts for another op's timed-out launch, the op's
# memory freed over NCCL after a failed create or destroy, the TP benchmark's baselines. The log comes back as
# $OUT/gpu_pytest_shared.log (bench/results/'s name). From the repository root:
#   bash bench/results/experiments/call_gpu_pytest_full.sh
OUT=${OUT:-build/gpu_pytest_full}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
export TPG_REQUIRE_GPUS=1
timeout 240 ninja build/tpgemm build/libtpgemm.so tests > "$R/ninja.log" 2>&1; at "ninja" $?
timeout -s INT -k 10 330 python3 -m pytest -q -rs tests/test_gpu.py > "$OUT/gpu_pytest_shared.log" 2>&1
at "GPU pytest" $?
grep -E "passed|failed|FAILED|Error" "$OUT/gpu_pytest_shared.log" | tail -8
cat "$OUT/summary.txt"
