#!/usr/bin/env bash
# x2 call 5 (nvidia-h200-x2, ~560 s; carry build/selftest/kernel_selftest for the rings group): racecheck / synccheck
# / initcheck with the TP = 2 group across GPUs for the first time (bench/results/sanitizers.json), then the fp8 TP
# benchmark (tp2_e4m3.json: fused e4m3 against torch's scaled async TP and _scaled_mm, one round).
# Back in $OUT: summary.txt, sanitizers.json, tp2_e4m3.json, tp2_e4m3_table.md, records.tgz.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
build
lim=$(limit 320) # the rings group runs last: it gets what the TP = 2 group leaves of this
if [ "$lim" = 0 ]; then note "sanitizers (no time left)" 124; else
    OUT="$R/san" STEP_BUDGET_S=$lim timeout -k 10 "$lim" bash tests/gpu/run_sanitizers.sh --tp 2 --jobs 10 \
        >"$R/san.log" 2>&1
    note sanitizers $?
fi
cp "$R/san/sanitizers.json" "$OUT/" 2>/dev/null
tp_run e4m3 220 --dtype e4m3 --rounds 1
cp "$R"/e4m3/tp2_e4m3.json "$OUT"/ 2>/dev/null
tail -20 "$R/san.log" 2>/dev/null
cat "$OUT/tp2_e4m3_table.md" 2>/dev/null
cat "$OUT/summary.txt"
