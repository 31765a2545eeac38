#!/bin/bash
# One device call (1 GPU, ~5 min): the local-GEMM benchmark's first full bf16 run under its 2026-12-05 method (the
# runtime's pick published, the per-element check after the first call and after the sustained rounds, an
# unmeasured first burst window, short windows behind a device-side delay). Carry build/bench/local_gemm (built here:
# `ninja bench`). Output: $OUT/local_gemm.{json,log,md} and summary.txt. From the repository root:
#   bash bench/results/experiments/call_local_bf16_method.sh
OUT=${OUT:-build/local_bf16_method}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
timeout 330 build/bench/local_gemm --dtype bf16 --budget-s 300 --out "$OUT/local_gemm.json" > "$OUT/local_gemm.log" 2>&1
at "local_gemm --dtype bf16" $?
python3 bench/report.py "$OUT/local_gemm.json" --markdown "$OUT/local_gemm.md" --png "$OUT/local_gemm.png" \
    > "$R/report.log" 2>&1; at report $?
tail -16 "$OUT/local_gemm.log"
python3 -c "import json, sys; [print(r['name'], r['config'], r['published'], r['check'], r['max_error'],
            r['late_windows'], r['error']) for r in json.load(open(sys.argv[1]))]" "$OUT/local_gemm.json"
cat "$OUT/summary.txt"
