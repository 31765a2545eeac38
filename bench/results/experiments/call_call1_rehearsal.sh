#!/bin/bash
# One device call (1 GPU, ~6 min): x2 call 1's steps rehearsed on the tree of 2026-12-06 11:00Z, whose benchmark code
# changed after its last GPU run (bench_modes_h100_0358Z: e58f403 the options in tp_options.py, 2fe8361 each
# variant's energy method). Times mean nothing with both ranks on one GPU. Steps: the build; the TP benchmark at
# TP = 1 (async TP eager and from a CUDA graph on a real GPU); the --share-device run of call 1's options on one shape
# of each op, 70B-o with its copy-engine twin; verdict.py on that file (the anchors it lacks are named, not a fault);
# the GPU pytest's missing-peer timeout cases with both ranks on the GPU (call 1 runs their across-GPU twins). From the
# repository root:
#   bash bench/results/experiments/call_call1_rehearsal.sh
OUT=${OUT:-build/call1_rehearsal}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
logged build build.log 150 ninja build/tpgemm build/libtpgemm.so build/tests/gpu_timeout build/tests/gpu_multiprocess \
    build/tests/gpu_pdl_chain build/tests/gpu_epochs build/tests/gpu_transfer_flags build/tests/gpu_barrier_epochs \
    build/trace/tests/gpu_timeout
logged "run_tp.sh --tp 1 (async TP eager and captured)" tp1.log 150 env TP_BENCH_VERBOSE=1 OUT="$R/tp1" \
    bash bench/run_tp.sh --tp 1 --only 8B-qkv,8B-o --rounds 1 --window 0.2
logged "run_tp.sh --tp 2 --share-device --alt-copy-engine-partials" tp_smoke.log 200 \
    env CUDA_DEVICE_MAX_CONNECTIONS=32 OUT="$R/tp" bash bench/run_tp.sh --tp 2 --share-device \
    --only 8B-qkv,70B-o,8B-o --rounds 1 --window 0.2 --alt-copy-engine-partials
python3 - "$R/tp1/tp1.json" "$R/tp/tp2_shared.json" <<'PY' 2>&1 | tee "$R/modes.txt"
import json, sys
for path in sys.argv[1:]:
    for r in json.load(open(path)):
        print(r["tp"], r["name"], "check", r["check"], "async", r.get("torch_async_tp_mode"), "local",
              r["local_mode"], r["local_modes"], "alt", {k: v.get("check") for k, v in r.get("alt", {}).items()},
              "errors", r.get("errors"))
PY
python3 bench/x2/verdict.py "$R/tp/tp2_shared.json" > "$R/verdict.txt" 2>&1; at "verdict.py" $?
cat "$R/verdict.txt"
# the shared-device twins of call 1's TIMEOUT_CASES (bench/x2/pytest_cases.sh selects the across-GPU ones): 8 cases
SHARED_TIMEOUTS="(shared_device or shared-device) and (missing_peer or call_after_a_late_one)"
logged "gpu pytest: the timeout cases, shared device" gpu_pytest_timeout.log 150 \
    python3 -m pytest -q -rA tests/test_gpu.py -k "$SHARED_TIMEOUTS"
grep -E "^(PASSED|FAILED|ERROR|SKIPPED)" "$R/gpu_pytest_timeout.log"; tail -2 "$R/gpu_pytest_timeout.log"
cat "$OUT/summary.txt"
