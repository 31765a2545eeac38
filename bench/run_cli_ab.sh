#!/usr/bin/env bash
# A quick A/B of TP = 1 configs on the device machine: each config's CLI time (build/tpgemm, no check) on each
# problem, interleaved (rep 1: every problem x config, then rep 2, ...) so no variant runs only cold or only hot.
# Burst figures of short runs (~40 ms a call set): for what a config does at the power cap use
# bench/run_local_gemm.sh --aa --configs ... instead. Experimental kernels: x_ configs in schedules.yaml.
#   bench/run_cli_ab.sh [--reps N] [--iterations N] [--dry-run] CONFIG,CONFIG,... MxNxK,MxNxK,...
# Writes $OUT/cli_ab.log (default build/bench-out): one line per run, "rep problem config us"; prints per
# problem and config the median over reps and its ratio to the first config (lower time = faster).
set -u
cd "$(dirname "$0")/.." || exit 2
usage() { sed -n '6p' "$0" | sed 's/^#   //' >&2; exit 2; }
REPS=3 ITER=200 DRY=0
while [[ $# -gt 0 && $1 == --* ]]; do
    case $1 in
        --reps) [[ ${2:-} =~ ^[1-9][0-9]?$ ]] || { echo "run_cli_ab.sh: --reps takes 1..99" >&2; exit 2; }; REPS=$2; shift 2 ;;
        --iterations) [[ ${2:-} =~ ^[1-9][0-9]{0,4}$ ]] || { echo "run_cli_ab.sh: --iterations takes 1..99999" >&2; exit 2; }
            ITER=$2; shift 2 ;;
        --dry-run) DRY=1; shift ;;
        *) echo "run_cli_ab.sh: unknown flag $1" >&2; usage ;;
    esac
done
[[ $# -eq 2 ]] || usage
IFS=, read -r -a CONFIGS <<< "$1"
IFS=, read -r -a PROBLEMS <<< "$2"
for p in "${PROBLEMS[@]}"; do
    [[ $p =~ ^[1-9][0-9]*x[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "run_cli_ab.sh: problem '$p' is not MxNxK" >&2; exit 2; }
done
[[ -x build/tpgemm ]] || { echo "run_cli_ab.sh: build/tpgemm is missing (ninja build/tpgemm)" >&2; exit 2; }
known=$(build/tpgemm --list | awk 'NR > 1 && $3 == 1 {print $1}')
for c in "${CONFIGS[@]}"; do
    grep -qx -- "$c" <<< "$known" || { echo "run_cli_ab.sh: '$c' is no TP = 1 config (build/tpgemm --list)" >&2; exit 2; }
done
OUT="${OUT:-$PWD/build/bench-out}"
mkdir -p "$OUT"
L="$OUT/cli_ab.log"
: > "$L"
for ((rep = 1; rep <= REPS; rep++)); do
    for p in "${PROBLEMS[@]}"; do
        IFS=x read -r m n k <<< "$p"
        for c in "${CONFIGS[@]}"; do
            cmd=(build/tpgemm --config "$c" --tp 1 --m "$m" --n "$n" --k "$k" --no-check --iterations "$ITER" --json)
            if [[ $DRY -eq 1 ]]; then echo "$rep $p $c: ${cmd[*]}"; continue; fi
            # one JSON object on stdout; avg_ms is null (and the exit status non-zero) when the run failed
            us=$(timeout 120 "${cmd[@]}" 2>/dev/null | python3 -c \
                'import json,sys; v=json.load(sys.stdin).get("avg_ms"); print(f"{v*1000:.1f}" if v else "nan")' 2>/dev/null)
            echo "$rep $p $c ${us:-nan}" | tee -a "$L" >&2
        done
    done
done
[[ $DRY -eq 1 ]] && exit 0
python3 - "$L" "${CONFIGS[0]}" <<'PY'
import math, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, prob, cfg, us = line.split()
    runs.setdefault(prob, {}).setdefault(cfg, []).append(float(us))
print(f"{'problem':18s} {'config':32s} {'median us':>10s} {'ratio':>7s}  reps")
bad = 0
for prob, by_cfg in runs.items():
    base = statistics.median(by_cfg.get(sys.argv[2], [math.nan]))
    for cfg, v in by_cfg.items():
        bad += any(map(math.isnan, v))  # a failed run counts even where the median of the rest looks fine
        med = math.nan if any(map(math.isnan, v)) else statistics.median(v)
        print(f"{prob:18s} {cfg:32s} {med:10.1f} {med / base:7.3f}  {' '.join(f'{x:.1f}' for x in v)}")
sys.exit(1 if bad else 0)
PY
