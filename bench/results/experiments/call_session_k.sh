#!/bin/bash
# One device call (1 GPU, ~8 min; an H200: the fp8 table is the H200's): (1) the runtime changes of 2026-12-05-k on
# the GPU - the collectives that break a context after an exchange out of step (bootstrap.c), the launch wait when
# its event cannot be recorded (op_run.c), the capture's node removed on failure (graph.c), the reference check's
# errors through checks.h (reference.cu) - by the GPU pytest's shared-device cases that make collective calls
# (processes, captures, NCCL, torch's graphs); (2) on an H200 the fp8 (e4m3, fast accumulation) local-GEMM table under
# the benchmark's 2026-12-05 method (carry build/bench/local_gemm, built here by `ninja bench`); on an H100 instead the
# promoting tiles side by side (call_promote_tiles.sh's run; carry build/promote/local_gemm, built from
# promote_tiles.patch as that script says, then copied there). From the repository root:
#   bash bench/results/experiments/call_session_k.sh
# With less device time left, LOCAL_BUDGET_S=<s> shortens the local-GEMM run (its --budget-s; default 300), and
# ONLY_CHECKS=1 leaves it out.
OUT=${OUT:-build/session_k}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
timeout 150 ninja build/tpgemm build/libtpgemm.so tests > "$R/build.log" 2>&1
at build $?
TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32 timeout -s INT -k 10 150 python3 -m pytest -q -rA tests/test_gpu.py \
    -k "(shared and (process or captured or nccl or torch or new_operands)) or wrong_d" > "$R/gpu_pytest_collectives.log" 2>&1
at "gpu pytest, shared-device collectives" $?
grep -E "^(PASSED|FAILED|ERROR)" "$R/gpu_pytest_collectives.log" | cut -c1-160
tail -2 "$R/gpu_pytest_collectives.log"
timeout 120 build/tests/gpu_pdl_chain > "$R/gpu_pdl_chain.log" 2>&1  # since e47ec37 with a host product's check
at "gpu_pdl_chain" $?
tail -4 "$R/gpu_pdl_chain.log" | cut -c1-220
# since a268afd a system memory barrier (batch mem-op node) between each copy-engine copy and its flag: the graphs
# with it built and checked - an all-gather's COPY/FLAG, the copy-engine partials' bands - and fresh operands a call
T="timeout 150 build/tpgemm --share-device --iterations 3 --warmup-iterations 1"
CUDA_DEVICE_MAX_CONNECTIONS=32 $T --tp 2 --m 8192 --n 8192 --k 4096 > "$R/barrier_ag.log" 2>&1
at "tpgemm all-gather TP 2 (COPY, barrier, FLAG)" $?
CUDA_DEVICE_MAX_CONNECTIONS=32 $T --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1 \
    > "$R/barrier_ce.log" 2>&1
at "tpgemm rs_tila_bf16_ce_tp2 (bands, barrier, flags)" $?
CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 240 build/tests/gpu_epochs 2 --share-device > "$R/barrier_epochs.log" 2>&1
at "gpu_epochs 2 --share-device" $?
grep -h -E "Disposition|passed|FAIL" "$R"/barrier_*.log | cut -c1-160 | tail -8
[ -n "${ONLY_CHECKS:-}" ] && { cat "$OUT/summary.txt"; exit 0; }  # ONLY_CHECKS=1: step (1) alone (little time left)
if nvidia-smi -L | grep -q H100; then
    OUT=$OUT/promote LOCAL_GEMM=build/promote/local_gemm bash "$(dirname "$0")/call_promote_tiles.sh"
    at "call_promote_tiles.sh (its summary in promote/)" $?
    cat "$OUT/summary.txt"
    exit 0
fi
j=$OUT/local_gemm_e4m3.json
timeout 330 build/bench/local_gemm --dtype e4m3 --budget-s "${LOCAL_BUDGET_S:-300}" --out "$j" \
    > "$R/local_gemm_e4m3.log" 2>&1
at "local_gemm --dtype e4m3" $?
python3 bench/report.py "$j" --markdown "${j%.json}.md" --png "${j%.json}.png" > "$R/report_e4m3.log" 2>&1
at "report e4m3" $?
tail -14 "$R/local_gemm_e4m3.log"
cat "$OUT/summary.txt"
