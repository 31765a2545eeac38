#!/bin/bash
# One device call (1 GPU, <= ~9 min): the local-GEMM benchmark under its 2026-12-05 method, all ten problems, one run
# per argument (the H200 republish of BENCHMARKS.md's local tables). Runs: bf16, fp16, e4m3 (fast accumulation
# against cuBLASLt's), e4m3p (--precise-fp8: the promoted kernels against cuBLASLt without fast accumulation); a run
# name ending in t (bf16t, e4m3t, ...) adds --lt-algos 8: cuBLASLt's fastest of its first 8 heuristic algorithms timed
# beside its top one (~25% longer; not a republish: the tables stay against the top algorithm). Carry
# build/bench/local_gemm (built here: `ninja bench`). Output: $OUT/local_gemm_<run>.{json,md,png}, summary.txt and
# records.tgz (the logs): at most 8 files, so give at most two runs a call. From the repository root:
#   bash bench/results/experiments/call_local_method.sh bf16        (~5 min)
#   bash bench/results/experiments/call_local_method.sh e4m3 e4m3p  (~7 min)
#   bash bench/results/experiments/call_local_method.sh bf16t       (~6-7 min: one such run a call)
[ $# -ge 1 ] || { echo "usage: call_local_method.sh bf16|fp16|e4m3|e4m3p[t] ..." >&2; exit 2; }
OUT=${OUT:-build/local_method}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
for run in "$@"; do
    case ${run%t} in
        bf16|fp16|e4m3) flags=(--dtype "${run%t}") ;;
        e4m3p) flags=(--dtype e4m3 --precise-fp8) ;;
        *) echo "call_local_method.sh: unknown run $run" >&2; exit 2 ;;
    esac
    budget=300
    [ "$run" = "${run%t}" ] || flags+=(--lt-algos 8) budget=400
    j=$OUT/local_gemm_$run.json
    timeout $((budget + 40)) build/bench/local_gemm "${flags[@]}" --budget-s $budget --out "$j" > "$R/local_gemm_$run.log" 2>&1
    at "local_gemm ${flags[*]}" $?
    python3 bench/report.py "$j" --markdown "${j%.json}.md" --png "${j%.json}.png" > "$R/report_$run.log" 2>&1
    at "report $run" $?
    tail -14 "$R/local_gemm_$run.log"
    grep -h "best_of_8 /\|fastest of its" "$R/local_gemm_$run.log" "${j%.json}.md"
    python3 -c "import json, sys; [print(r['name'], r['config'], r['published'], r['check'], r['max_error'],
                r['late_windows'], r['error']) for r in json.load(open(sys.argv[1]))]" "$j"
done
cat "$OUT/summary.txt"
