#!/usr/bin/env bash
# Timelines of fused calls next to the local GEMM of the same per-GPU problem (trace build, one device
# call), to see where fused time goes: per stage, the mean mainloop and epilogue time of a tile record.
#
# Usage: bench/run_trace.sh [--tp N] [--suffix S] [M N K]     (default TP 2, 16384 10240 8192)
#   --suffix S   config family: ag_rota_bf16${S}_tpN / rs_tila_bf16${S}_tpN and their _tp1 (e.g. _wide); the
#                reduce-scatter ring pushes its partials (its `_push` twin where the family's default does not),
#                and runs again with them carried by copy engine (the `_ce` twin, or the default after the switch;
#                its bands and flag copies timed by CUDA events) where the family has such a config
# Output ($OUT, default build/trace-out; at most 8 files come back from the device): per run NAME.png, summary.txt
# (bench/timeline.py's summary of every run) and traces.tar.gz (the trace JSONs and tpgemm logs): 7 files.
set -u
cd "$(dirname "$0")/.." || exit 2
export PATH="$PATH:/usr/local/cuda/bin"
TP=2
SUFFIX=""
POS=()
while [ $# -gt 0 ]; do
    case "$1" in
    --tp) TP=${2:-}; shift 2 || shift ;;
    --suffix) SUFFIX=${2-}; shift 2 || shift ;;
    --*) echo "run_trace.sh: unknown flag '$1' (use --tp N, --suffix S, then M N K)" >&2; exit 2 ;;
    *) POS+=("$1"); shift ;;
    esac
done
[ ${#POS[@]} -le 3 ] || { echo "run_trace.sh: at most M N K after the flags, got: ${POS[*]}" >&2; exit 2; }
M=${POS[0]:-16384} N=${POS[1]:-10240} K=${POS[2]:-8192}
for v in "$TP" "$M" "$N" "$K"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "run_trace.sh: '$v' is not a whole number >= 1 (--tp N, M N K)" >&2; exit 2; }
done
OUT=${OUT:-build/trace-out}
mkdir -p "$OUT/json"
rm -f "$OUT/summary.txt"
ninja trace >"$OUT/json/build.log" 2>&1 || { tail -20 "$OUT/json/build.log"; exit 4; }

# run NAME tpgemm-args...: one traced run, its summary and picture; prints the lines worth comparing (FAILED=1 if
# the run failed).
FAILED=0
run() {
    local name=$1 rc
    shift
    timeout 120 build/trace/tpgemm "$@" --iterations 20 --trace "$OUT/json/$name.json" >"$OUT/json/$name.log" 2>&1
    rc=$?
    if [ $rc != 0 ]; then echo "== $name: exit $rc"; tail -3 "$OUT/json/$name.log"; FAILED=1; return; fi
    # --check: every CTA, record and tile in the timeline (bench/timeline_check.py)
    if ! python3 bench/timeline.py "$OUT/json/$name.json" --check --png "$OUT/$name.png" \
        >"$OUT/json/$name.txt" 2>&1; then
        echo "== $name: bench/timeline.py failed or found the timeline incomplete"; grep "^check:" "$OUT/json/$name.txt"
        FAILED=1
    fi
    { echo "== $name ($*)"; cat "$OUT/json/$name.txt"; } >>"$OUT/summary.txt"
    # the trace build's speed (timestamps compiled in), not the shipped kernels'
    echo "== $name ($*): trace build $(grep -E '^Avg runtime' "$OUT/json/$name.log")"
    grep -E "^rank 0|^  stage" "$OUT/json/$name.txt" | head -3
}

run ag_fused --config "ag_rota_bf16${SUFFIX}_tp$TP" --tp "$TP" --m "$M" --n "$N" --k "$K"
run ag_local --config "ag_rota_bf16${SUFFIX}_tp1" --tp 1 --devices 0 --m "$M" --n $((N / TP)) --k "$K"
# the reduce-scatter ring pushing: the family's `_push` twin where the default moves its partials another way
# (bench/x2/ce_default.py)
RS="rs_tila_bf16${SUFFIX}"
build/trace/tpgemm --list | grep -q "^${RS}_push_tp$TP " && RS="${RS}_push"
run rs_fused --config "${RS}_tp$TP" --tp "$TP" --m "$M" --n "$N" --k "$K"
# the same ring with its partials carried by copy engine, where the family has it (--list's notes say which)
CE=$(build/trace/tpgemm --list | awk -v f="rs_tila_bf16${SUFFIX}" -v t="$TP" \
    '($1 == f "_ce_tp" t || $1 == f "_tp" t) && /copy-engine partials/ {print $1; exit}')
[ -n "$CE" ] && run rs_ce_fused --config "$CE" --tp "$TP" --m "$M" --n "$N" --k "$K"
run rs_local --config "rs_tila_bf16${SUFFIX}_tp1" --tp 1 --devices 0 --m "$M" --n "$N" --k $((K / TP))
tar -czf "$OUT/traces.tar.gz" -C "$OUT" json && rm -rf "$OUT/json"
exit "$FAILED" # 1 where a traced run failed
