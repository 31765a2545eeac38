#!/bin/bash
# One device call (1 GPU, <= ~9 min): the 2026-12-07 (01:06Z-) session's changes that no GPU had run. tp_bench.py now
# imports torch after its option checks (load_torch); the context checks a negative or repeated device ordinal before
# counting devices (ctx.c check_devices, ctx_rank.c local_checks). Runs, every rank on the one GPU: the TP benchmark's
# shared-device smoke run (run_all.sh's SHARED_TP_ARGS), the C tests with a GPU present, the whole GPU pytest. From the
# repository root:
#   [PYTEST_S=seconds] bash bench/results/experiments/call_session_t.sh   (the GPU pytest's bound, default 330; 0: none)
OUT=${OUT:-build/session_t}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
export TPG_REQUIRE_GPUS=1
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
fails=0
for t in build/tests/test_*; do
    case "$t" in *.o | *.d) continue ;; esac
    "$t" > "$R/$(basename "$t").log" 2>&1 || { fails=$((fails + 1)); echo "FAILED $t" | tee -a "$R/c_tests.txt"; }
done
at "C tests ($fails failed)" "$fails"
logged "run_tp.sh --share-device" tp_shared.log 150 env OUT="$R/tp_shared" CUDA_DEVICE_MAX_CONNECTIONS=32 \
    bench/run_tp.sh --tp 2 --share-device --rounds 1 --window 0.3 --only 8B-qkv,8B-o,70B-o
tail -12 "$R/tp_shared.log"
if [ "${PYTEST_S:-330}" -gt 0 ]; then  # PYTEST_S=0: no GPU pytest (timeout 0 would mean no bound)
    timeout -s INT -k 10 "${PYTEST_S:-330}" python3 -m pytest -q -rs tests/test_gpu.py > "$R/gpu_pytest_shared.log" 2>&1
    at "GPU pytest" $?
    grep -E "passed|failed|FAILED|Error" "$R/gpu_pytest_shared.log" | tail -8
fi
cat "$OUT/summary.txt"
