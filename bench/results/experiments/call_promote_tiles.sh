#!/bin/bash
# One device call (1 GPU, ~6 min; an H100 first: name nvidia-h100-x1): the promoting fp8 tiles side by side in the same
# windows, all ten problems, --precise-fp8 against cuBLASLt without fast accumulation - the shipped 128x160 (no
# deferred stores), the 128x128 it replaced (x_p8_128_tp1) and the 128x160 with deferred stores of 16 held registers
# (x_p8_160d_tp1, TPG_DIAG_DEFER_PAST_144). On the H100 only an experiment build of the 128x160 (32 held registers,
# spilling) ran so far, on three problems (docs/perf_notes/2026-12-05-i.md, "Left"). Build here first, carry
# build/bench/local_gemm, then undo the patch:
#   git apply bench/results/experiments/promote_tiles.patch && python3 -m generator && ninja bench
#   (device call) bash bench/results/experiments/call_promote_tiles.sh
#   git checkout schedules.yaml generated/ && python3 -m generator && ninja bench
#   LOCAL_GEMM=<binary> (default build/bench/local_gemm) and LOCAL_BUDGET_S=<s> (default 330) for a call that runs it
#   beside other steps (call_session_k.sh).
OUT=${OUT:-build/promote_tiles}
LOCAL_GEMM=${LOCAL_GEMM:-build/bench/local_gemm}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
if ! "$LOCAL_GEMM" --dtype e4m3 --precise-fp8 --dry-run 2>&1 | grep -q "x_p8_160d_tp1"; then
    echo "$LOCAL_GEMM has no x_p8_160d_tp1: build it with promote_tiles.patch applied" >&2; exit 2
fi
j=$OUT/local_gemm_e4m3p_tiles.json
timeout 360 "$LOCAL_GEMM" --dtype e4m3 --precise-fp8 --budget-s "${LOCAL_BUDGET_S:-330}" --out "$j" \
    > "$R/local_gemm.log" 2>&1
at "local_gemm --dtype e4m3 --precise-fp8 (three promoting tiles)" $?
tail -13 "$R/local_gemm.log"
python3 -c "import json, sys
for r in json.load(open(sys.argv[1])):
    v = {x['config']: x for x in r['variants']}
    print(r['name'], r['check'], ' '.join('%s %s/%s J %s' % (c, x['burst_tflops'], x['sustained_tflops'], x['joules'])
                                         for c, x in v.items()))" "$j" | cut -c1-250
cat "$OUT/summary.txt"
