#!/bin/bash
# One device call (nvidia-h200, 1 GPU, ~5 min) for the 2026-12-05 (02:06Z-) session's changes, which no GPU has run
# (docs/perf_notes/2026-12-05-b.md; the TP benchmark's own tests ran here under a CPU torch, 63 passed, so not again):
# run_tp.sh with both ranks on the GPU (--share-device: gloo, no async TP, times mean nothing) on an all-gather and a
# reduce-scatter shape with the route twins (each record's check, recheck, local_check, local_recheck and the alts'
# re-checks printed), then the energy fit at world size 1 again with the sampler's new brackets and its fit_stats.
# SKIP_ENERGY=1 leaves the energy fit out, ROUNDS=1 shortens the shared run (a short lease). Records tarred into
# $OUT/records.tgz. From the repository root:
#   bash bench/results/experiments/call_bench_review_checks.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-build/bench_review}
R=$OUT/r; mkdir -p "$R"; trap 'tar -C "$OUT" -czf "$OUT/records.tgz" r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a "$OUT/summary.txt"; }
{ date -u; bash bench/x2/tree_hash.sh; nvidia-smi -L; } > "$R/provenance.txt" 2>&1
ninja build/tpgemm build/libtpgemm.so tests > "$R/build.log" 2>&1; at build $?
OUT="$R/shared" TP_BENCH_TIMEOUT_S=200 bash bench/run_tp.sh --tp 2 --share-device --rounds "${ROUNDS:-2}" --window 0.2 \
    --only 8B-qkv,8B-o --alt-copy-engine-partials --alt-pull-partials > "$R/shared.log" 2>&1
at "run_tp --tp 2 --share-device" $?
python3 - "$R/shared" <<'PY' | tee "$R/checks.txt"
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/tp2*.json")):
    for r in json.load(open(f)):
        alts = {k: (v.get("check"), v.get("recheck")) for k, v in (r.get("alt") or {}).items()}
        print(f"{r['name']:8} {r.get('config', '?'):22} check {r.get('check')} recheck {r.get('recheck')} local_check "
              f"{r.get('local_check')} local_recheck {r.get('local_recheck')} alts {alts} errors "
              f"{sorted((r.get('errors') or {}).keys())}")
PY
if [ "${SKIP_ENERGY:-0}" = 1 ]; then at "energy fit skipped (SKIP_ENERGY=1)" 0; else
    OUT="$R/energy" bash bench/results/experiments/call_energy_fit.sh > "$R/energy.log" 2>&1
    at "energy fit" $?; cat "$R/energy/r/spread.txt" 2>/dev/null | tee "$R/spread.txt"
fi
cat "$OUT/summary.txt"
