#!/bin/bash
# One device call (nvidia-h200, 1 GPU, ~4 min): the TP benchmark's joules per call by the counter's delta over each
# window (the default) against the power fitted over the counter's steps (--energy-fit: bench/tp_energy.py), both
# from the same windows, at world size 1 on two shapes, 8 rounds. What to read (spread.txt): per variant the two
# medians (they should agree) and each method's spread over the windows; where the fit's is clearly smaller, make it
# the default before the x2 calls (docs/perf_notes/2026-12-04-j.md). Records tarred into $OUT/records.tgz.
# The first run (energy_fit_0228Z) fitted no window: the sampler kept no step within 2 ms of the read before; since
# then it brackets a step by both reads (10 ms) and each window's record says what it saw (fit_stats, printed here).
# From the repository root: bash bench/results/experiments/call_energy_fit.sh
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-build/energy_fit_out}
R=$OUT/r; mkdir -p "$R"; trap 'tar -C "$OUT" -czf "$OUT/records.tgz" r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"; }
OUT="$R/run" TP_BENCH_TIMEOUT_S=300 bash bench/run_tp.sh --tp 1 --only 405B-fc1,8B-o --rounds 8 --tag energy_fit \
    --energy-fit > "$R/run.log" 2>&1
at "run_tp --tp 1 --energy-fit" $?
python3 - "$R/run/tp1_energy_fit.json" <<'PY' | tee "$R/spread.txt"
import json, statistics, sys
def spread(xs):
    return f"median {statistics.median(xs):.4f} J/call, spread {(max(xs) - min(xs)) / statistics.median(xs):.1%}"
for rec in json.load(open(sys.argv[1])):
    for v, ws in (rec.get("windows") or {}).items():
        delta = [w["joules_delta"] / w["calls"] for w in ws if w.get("joules_delta") is not None]
        fit = [w["joules_fit"] / w["calls"] for w in ws if w.get("joules_fit") is not None]
        ms = [w["seconds"] / w["calls"] * 1e3 for w in ws]
        if len(delta) > 1 and len(fit) > 1:
            print(f"{rec['name']} {v} ({len(ws)} windows, {statistics.median(ms):.3f} ms/call): delta {spread(delta)}; "
                  f"fit {spread(fit)} ({len(fit)} windows fitted)")
        else:
            print(f"{rec['name']} {v}: {len(delta)} delta and {len(fit)} fitted windows: nothing to compare")
        print(f"  sampler (rank 0, first window): {ws[0].get('fit_stats') if ws else None}")
PY
cat "$OUT/summary.txt"
