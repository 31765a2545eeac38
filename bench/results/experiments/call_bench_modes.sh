#!/bin/bash
# One device call (1 GPU, ~6 min): the TP benchmark's modes (2026-12-06, after a review of its method): PyTorch async
# TP also captured into a CUDA graph and replayed, tpgemm's local GEMM also as the TP = 1 default pick, the record
# taking each one's faster (tp_records.MODES); fused_all_gather_matmul without its gathered-A copy (return_A False);
# 3 rounds by default. Runs the CPU tests that need torch (tp_bench's collectives under gloo: the modes' faults), the
# benchmark at TP = 1 (async TP over a group of one: its eager call and its capture on a real GPU; symmetric memory
# refuses ranks sharing a GPU) and the --share-device smoke run (8B-o's local default mode). From the repository root:
#   bash bench/results/experiments/call_bench_modes.sh
OUT=${OUT:-build/bench_modes}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
logged build build.log 120 ninja build/tpgemm build/libtpgemm.so
logged "pytest (torch on the CPU)" cpu_torch_pytest.log 240 python3 -m pytest -q -rs tests/test_tp_bench.py \
    tests/test_tp_bench_collectives.py tests/test_tp_check.py tests/test_tp_numerics.py
tail -3 "$R/cpu_torch_pytest.log"
logged "run_tp.sh --tp 1 (async TP eager and captured)" tp1.log 150 env TP_BENCH_VERBOSE=1 OUT="$R/tp1" \
    bash bench/run_tp.sh --tp 1 --only 8B-qkv,8B-o --rounds 1 --window 0.2
python3 - "$R/tp1/tp1.json" <<'PY' 2>&1 | tee "$R/tp1_modes.txt"
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["name"], "check", r["check"], "async", r["torch_async_tp_mode"], r["torch_async_tp_modes"],
          "local", r["local_mode"], r["local_modes"], "errors", r.get("errors"))
PY
logged "run_tp.sh --tp 2 --share-device (8B-qkv, 8B-o)" tp_smoke.log 170 \
    env CUDA_DEVICE_MAX_CONNECTIONS=32 OUT="$R/tp" bash bench/run_tp.sh --tp 2 --share-device --only 8B-qkv,8B-o \
    --rounds 1 --window 0.2
python3 - "$R/tp/tp2_shared.json" <<'PY' 2>&1 | tee "$R/tp2_modes.txt"
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["name"], "check", r["check"], "local", r["local_mode"], r["local_config"], r["local_modes"],
          "errors", r.get("errors"))
PY
cat "$OUT/summary.txt"
