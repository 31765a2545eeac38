#!/usr/bin/env bash
# TMA traffic floors and the emulated GEMM pipeline on the device machine (1 x H200), one call (~1 min):
# bench/tma_rate.cu without math (the load floor), with the tensor pipe emulated at its peak (1024 clocks per
# 128x256x64 k-block) and at ~93% of it, each with a 2200-clock epilogue, then the shipped kernels' own times
# (CLI, 200 calls) for the same problems. Writes $OUT/tma_rate.log (default build/bench-out); prints it.
# Usage: bench/run_tma_rate.sh [extra tma_rate flags, e.g. --problem 8192x4096x2048]
set -u
cd "$(dirname "$0")/.." || exit 2
OUT="${OUT:-$PWD/build/bench-out}"
mkdir -p "$OUT"
L="$OUT/tma_rate.log"
ninja bench build/tpgemm >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 4; }
{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu,utilization.gpu --format=csv; } >"$L" 2>&1
rc=0
for model in "" "--compute-cycles 1024 --epilogue-cycles 2200" "--compute-cycles 1100 --epilogue-cycles 2200"; do
    # shellcheck disable=SC2086  # $model is a list of flags
    timeout 150 build/bench/tma_rate --iterations 100 --rounds 5 $model "$@" >>"$L" 2>&1 || rc=$?
done
for p in "8192 4096 2048" "4096 4096 4096" "16384 5120 8192"; do
    set -- $p
    for c in ag_rota_bf16_wide_tp1 gemm_bf16_wide_c2x1_tp1 ag_rota_bf16_tp1; do
        echo "== tpgemm $c $p: $(timeout 60 build/tpgemm --config $c --tp 1 --m "$1" --n "$2" --k "$3" --no-check \
            --iterations 200 2>&1 | grep -i 'avg runtime\|TFLOP' | tr '\n' ' ')" >>"$L"
    done
done
cat "$L"
exit $rc
