#!/usr/bin/env bash
# x2 call 4 (nvidia-h200-x2, ~560 s), only where call 1 says the copy engine carries the reduce-scatter partials
# faster (bench/x2/README.md): the defaults switched (bench/x2/ce_default.py; a no-op where the tree came switched
# already, as the README has it before call 2), issue 4's table again with each pick's push twin beside it (first:
# it is what the call is for), then tier 2's groups that run the defaults (TP = 2, C / beta / L, barriers beside the
# GEMM, one-hop, few rows, memcheck) with the time left, which call 2 covered if the tree was switched before it.
# Back in $OUT: summary.txt, tp2.json, tp2_table.md, tp2.png, tier2.json, records.tgz.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
if python3 bench/x2/ce_default.py --check >"$R/switch.log" 2>&1; then
    note "ce_default --check (the tree came switched)" 0
else
    python3 bench/x2/ce_default.py >>"$R/switch.log" 2>&1
    note "ce_default (the switch applied here)" $?
fi
if ! python3 bench/x2/ce_default.py --check >>"$R/switch.log" 2>&1; then
    note "the defaults are not switched: stopped (records/switch.log)" 1
    exit 1
fi
build
tp_run tp 380 --alt-push-partials
cp "$R"/tp/tp2.json "$R"/tp/tp2.png "$OUT"/ 2>/dev/null
lim=$(limit 240)
if [ "$lim" = 0 ]; then note "tier2 (no time left)" 124; else
    OUT="$R/t2" TIER2_GROUPS=tp2,scalars,overlap_barriers,one_hop,few_rows,memcheck STEP_BUDGET_S=$lim \
        timeout -k 10 "$lim" bash tests/gpu/run_tier2.sh --tp 2 >"$R/tier2.log" 2>&1
    note "tier2 (tp2, scalars, overlap_barriers, one_hop, few_rows, memcheck: 165 runs)" $?
fi
cp "$R/t2/tier2.json" "$OUT/" 2>/dev/null
tail -12 "$R/tier2.log" 2>/dev/null
cat "$OUT/tp2_table.md" 2>/dev/null
# --switched: the tree's defaults carry the copy engine, whatever twins a cut file holds
[ -f "$OUT/tp2.json" ] && python3 bench/x2/verdict.py --switched "$OUT/tp2.json" | tee "$R/verdict.txt"
cat "$OUT/summary.txt"
