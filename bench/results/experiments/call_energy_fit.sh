#!/bin/bash
# One device call (nvidia-h200, 1 GPU, ~6 min): the TP benchmark's joules per call by the counter's delta over each
# window (the default) against --energy-fit (the power fitted over the counter's steps, a sampler thread: bench/
# tp_windows.py), at world size 1 on two shapes, 4 rounds each, same call. What to read: per variant, the spread of
# the windows' J/call (records' "windows") by each method, and that the two medians agree within the delta's spread;
# if the fit's spread is clearly smaller, make it the default before the x2 calls (docs/perf_notes/2026-12-04-j.md).
# Records tarred into $OUT/records.tgz. From the repository root: bash bench/results/experiments/call_energy_fit.sh
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-build/energy_fit_out}
R=$OUT/r; mkdir -p "$R"; trap 'tar -C "$OUT" -czf "$OUT/records.tgz" r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"; }
for method in delta fit; do
    extra=(); [ "$method" = fit ] && extra=(--energy-fit)
    OUT="$R/$method" TP_BENCH_TIMEOUT_S=240 bash bench/run_tp.sh --tp 1 --only 405B-fc1,8B-o --rounds 4 \
        --tag "energy_$method" "${extra[@]}" > "$R/$method.log" 2>&1
    at "run_tp --tp 1 ($method)" $?
done
python3 - "$R" <<'PY' | tee "$R/spread.txt"
import json, statistics, sys
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("*/tp1_energy_*.json")):
    for rec in json.loads(path.read_text()):
        for v, w in (rec.get("windows") or {}).items():
            j = [x["joules"] / x["calls"] for x in w if x.get("joules") is not None and x.get("calls")]
            if len(j) > 1:
                print(f"{path.stem} {rec['name']} {v}: J/call median {statistics.median(j):.4f}, "
                      f"spread {(max(j) - min(j)) / statistics.median(j):.1%} over {len(j)} windows")
PY
cat "$OUT/summary.txt"
