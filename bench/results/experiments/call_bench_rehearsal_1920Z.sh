#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the shipped state: the TP benchmark's own tests under torch (ABBA rounds,
# the guarded --link-copies, the process group's timeout, --alt-push-partials), then run_tp.sh with both processes
# on the GPU (--share-device: gloo, no async TP, times mean nothing): the few-token runs of the x2 plan never yet
# run through tp_bench (--tokens 16; --tokens 32 with the row rule's and the stream-K alternatives), and the route
# twins with --link-copies (symmetric memory refuses a shared GPU: the diagnostic must drop, not the shape).
# Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; mkdir -p $R; trap 'tar -C $OUT -czf $OUT/records.tgz r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a $OUT/summary.txt; }
ninja build/tpgemm build/libtpgemm.so tests > $R/build.log 2>&1; at build $?
timeout 150 python3 -m pytest -q -rs tests/test_tp_bench_collectives.py tests/test_tp_bench.py \
    > $R/bench_pytest.log 2>&1
at "bench pytest" $?; tail -4 $R/bench_pytest.log
SH="--share-device --rounds 1 --window 0.2"
run() { # tag args...
    local tag=$1; shift
    OUT=$R/$tag TP_BENCH_TIMEOUT_S=120 bash bench/run_tp.sh --tp 2 $SH "$@" > $R/$tag.log 2>&1; at "run_tp $tag" $?
    python3 - "$R/$tag" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/tp2*.json")):
    for r in json.load(open(f)):
        alts = {k: v.get("check") for k, v in (r.get("alt") or {}).items()}
        print(f"  {f.split('/')[-1]:28} {r['name']:12} {r.get('config', '?'):24} check {r.get('check')} alts {alts} "
              f"errors {sorted((r.get('errors') or {}).keys())}")
PY
}
run m16 --tokens 16 --only 70B-o,70B-qkv,8B-o
run m32_row --tokens 32 --tag rowrule --only 70B-o,8B-o --alt-config rs_tila_bf16
run m32_sk --tokens 32 --tag sk64 --only 70B-qkv,70B-o --alt-config ag_rota_bf16_sk64,rs_tila_bf16_sk64
run twins --only 70B-o,8B-o --alt-copy-engine-partials --alt-pull-partials \
    --link-copies
