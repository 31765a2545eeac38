#!/bin/bash
# One device call (1 GPU, ~4 min): the TP benchmark's per-element error (tp_check.relative_errors' third figure,
# reported as *elem_err, bounding nothing yet) on a GPU for the first time, with both ranks on the one GPU
# (--share-device: gloo, no async TP, times mean nothing): the eight anchor shapes in bf16, four in e4m3, each
# record's check figures printed (rel, max, per element; the fused call's, the re-check's, the local GEMM's and the
# alts'). What a bound on it may be comes from these figures. Records tarred into $OUT/records.tgz. From the
# repository root:
#   bash bench/results/experiments/call_elem_err_shared.sh
OUT=${OUT:-build/elem_err}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
ninja build/tpgemm build/libtpgemm.so > "$R/build.log" 2>&1; at build $?
for dt in bf16 e4m3; do
    only="--alt-pull-partials"; [ $dt = e4m3 ] && only="--only 8B-qkv,8B-o,70B-o,70B-fc2"
    # shellcheck disable=SC2086
    OUT="$R/$dt" TP_BENCH_TIMEOUT_S=240 timeout 260 bash bench/run_tp.sh --tp 2 --share-device --rounds 1 \
        --window 0.2 --dtype $dt $only > "$R/$dt.log" 2>&1
    at "run_tp --tp 2 --share-device --dtype $dt" $?
done
python3 - "$R" <<'PY' | tee "$OUT/elem_err.txt"
import glob, json, sys
g = lambda x: "-" if x is None else f"{x:.2e}"  # noqa: E731
print(f"{'shape':9} {'dtype':5} {'config':26} {'check':6} {'rel':>8} {'max':>8} {'elem':>8} {'re-elem':>8} "
      f"{'local':>8} alts (elem)")
for f in sorted(glob.glob(sys.argv[1] + "/*/tp2*.json")):
    for r in json.load(open(f)):
        alts = " ".join(f"{k} {v.get('check')} {g(v.get('elem_err'))}" for k, v in (r.get("alt") or {}).items())
        print(f"{r['name']:9} {r['dtype']:5} {r.get('config', '?'):26} {r.get('check'):6} {g(r.get('rel_err')):>8} "
              f"{g(r.get('max_err')):>8} {g(r.get('elem_err')):>8} {g(r.get('recheck_elem_err')):>8} "
              f"{g(r.get('local_elem_err')):>8} {alts} {sorted((r.get('errors') or {}))}")
PY
cat "$OUT/summary.txt"
