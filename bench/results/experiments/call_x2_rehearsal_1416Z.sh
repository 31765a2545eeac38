#!/bin/bash
# One device call (nvidia-h200, 1 GPU): a rehearsal of the x2 plan's TP benchmark calls with every rank on the one
# GPU (`--share-device`: gloo for torch's collectives, no async TP, times mean nothing) - the experiments never run
# on a GPU through bench/tp_bench.py: --alt-gather-copy-engine and --alt-rs-ring at 128 tokens (the gathered walk's
# pulls and the one-hop walk against copy nodes and the ring, every shape), then call 2's alts on two shapes
# (--link-copies needs a GPU per rank), then e4m3 at 512 tokens. Each record's check and its alts' checks are what
# counts here. Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
run() { local name=$1 limit=$2; shift 2
  OUT=$OUT/r timeout $limit bench/run_tp.sh --tp 2 --share-device --rounds 1 --window 0.2 "$@" > $OUT/r/$name.log 2>&1
  echo "== $name rc=$?"; }
run m128_alts 230 --tokens 128 --alt-gather-copy-engine --alt-rs-ring
run call2_alts 200 --only 70B-qkv,8B-o --alt-overlap-barriers --alt-pull-partials --alt-captured --alt-nccl
run e4m3_m512 130 --dtype e4m3 --tokens 512 --only 8B-qkv,8B-o,70B-o
cd $OUT/r && python3 - <<'PY'
import glob, json
for f in sorted(glob.glob("tp2*_shared.json")):
    for r in json.load(open(f)):
        alts = {k: v.get("check") for k, v in (r.get("alt") or {}).items()}
        print(f"{f:28} {r['name']:14} {r.get('config', '?'):28} check {r.get('check')} alts {alts} "
              f"errors {list((r.get('errors') or {}).keys())}")
PY
cd $OUT && tar czf records.tgz r && rm -rf r
