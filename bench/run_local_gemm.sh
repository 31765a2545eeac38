#!/usr/bin/env bash
# Local-GEMM benchmark on the device machine (1 x H200): builds build/bench/local_gemm (`ninja bench`), runs it,
# writes JSON + logs + markdown + PNG to $OUT, prints the table last.
#
# Usage: bench/run_local_gemm.sh [local_gemm flags...]   e.g. --quick, --problems 8B-o,gemm-8192, --dtype bf16,
#        --aa --configs ag_rota_bf16_wide_tp1,x_* (an A/B of experimental x_ configs against one shipped config)
# Output ($OUT, default build/bench-out; at most 8 files so all come back from the device):
#   local_gemm.json  the records (bench/results/local_gemm.json when committed)
#   local_gemm.log   the benchmark's stdout+stderr (plan, estimate, per-run lines, table)
#   local_gemm.md    the markdown table (bench/report.py)     local_gemm.png  the plot (needs matplotlib)
#   build.log        ninja's output                          gpu_state.txt   nvidia-smi before and after (read only)
# Expected time: build ~1 min on a fresh machine, benchmark ~3.5 min for all 20 runs (it prints its own
# estimate first and stops starting runs past --budget-s, default 330 s), report a few seconds.
# Exit status: the benchmark's (0 ok, 1 a check failed, 2 usage, 3 no Hopper GPU, 5 CUDA/cuBLAS error), or 4 if
# the build fails. Afterwards, on the development machine (16-bit runs; an fp8 run goes to
# bench/results/local_gemm_e4m3.* or, with --precise-fp8, local_gemm_e4m3_promoted.*, and its own BENCHMARKS.md section):
#   cp <files_at>/local_gemm.{json,png,md} bench/results/ &&
#   python3 bench/report.py bench/results/local_gemm.json --benchmarks BENCHMARKS.md
set -u
cd "$(dirname "$0")/.." || exit 2
export PATH="$PATH:/usr/local/cuda/bin"
OUT="${OUT:-$PWD/build/bench-out}"
mkdir -p "$OUT"

# Card state, read only (never change clocks or power limits: METHOD.md). Throttle reasons show the power cap.
smi() { command -v nvidia-smi >/dev/null && { nvidia-smi -L; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,TEMPERATURE; } 2>&1; }
{ echo "== before $(date -u +%FT%TZ)"; smi; } >"$OUT/gpu_state.txt"

echo "== ninja bench"
if ! ninja bench >"$OUT/build.log" 2>&1; then
    tail -40 "$OUT/build.log"
    echo "run_local_gemm.sh: the build failed; see build.log" >&2
    exit 4
fi

echo "== build/bench/local_gemm $*"
set -o pipefail
build/bench/local_gemm --out "$OUT/local_gemm.json" "$@" 2>&1 | tee "$OUT/local_gemm.log"
rc=$?
set +o pipefail
{ echo "== after $(date -u +%FT%TZ)"; smi; } >>"$OUT/gpu_state.txt"

if [ -s "$OUT/local_gemm.json" ]; then
    echo
    echo "== bench/report.py (exit status of the benchmark: $rc)"
    python3 bench/report.py "$OUT/local_gemm.json" --markdown "$OUT/local_gemm.md" --png "$OUT/local_gemm.png" ||
        echo "run_local_gemm.sh: report.py failed" >&2
else
    echo "run_local_gemm.sh: no JSON was written (exit status $rc)" >&2
fi
exit $rc
