#!/bin/bash
# One device call (nvidia-h200, 1 GPU, ~4 min) after call_session_j_checks.sh: the tuner reworked in the 2026-12-04
# (22:08Z-) session (docs/perf_notes/2026-12-04-j.md), end to end on the one GPU: TP = 1, three candidates (two
# kernels and the default's); the checks before the build, the candidate build's ptxas reports read (no candidate
# here spills), the runs' records and the tuned file; then the same again, resumed: nothing to profile, ninja has
# nothing to do, the same tuned file. Records tarred into $OUT/records.tgz. From the repository root:
#   bash bench/results/experiments/call_tune_smoke.sh
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-build/tune_smoke_out}
R=$OUT/r; mkdir -p "$R"; trap 'tar -C "$OUT" -czf "$OUT/records.tgz" r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"; }
# tune_smoke BOUND NAME: the tune run, its tuned file $R/NAME.yaml and log $R/NAME.log
tune_smoke() {
    timeout "$1" python3 -m generator tune --shape 4096,4096,4096 --schedule AllGather1D_TilingCD_RotatingA --tp 1 \
        --knob tile=128x256x64,128x128x64 --knob stages=3 --knob consumers=2 --knob cluster=1x1 \
        --knob raster=grouped --knob raster_group=8 --knob consumer_mode=cooperative --iterations 20 -j 16 \
        --work build/tune_smoke --out "$R/$2.yaml" > "$R/$2.log" 2>&1
}
ninja build/tpgemm > "$R/build.log" 2>&1; at build $?
tune_smoke 300 tuned_smoke; at "tune smoke (TP = 1, 3 candidates)" $?; tail -4 "$R/tuned_smoke.log"
cp build/tune_smoke/state.jsonl "$R/" 2>/dev/null
tune_smoke 120 tuned_again; at "tune smoke again (resumed: nothing to profile)" $?; head -2 "$R/tuned_again.log"
cmp "$R/tuned_smoke.yaml" "$R/tuned_again.yaml" && echo "the same tuned file"
cat "$OUT/summary.txt"
