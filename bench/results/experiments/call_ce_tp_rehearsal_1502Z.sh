#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the rehearsal of 1136Z again, on the copy chains on tile-row counts
# (2026-12-04 15:02Z): `bench/run_tp.sh --alt-copy-engine-partials`, with both processes on the one GPU
# (`--share-device`: gloo for torch's collectives, no async TP, times mean nothing) on the three reduce-scatter
# shapes the plan reads first (70B-o, 8B-o, 70B-fc2): each shape's pick against its `_ce` twin on the same tensors, both checked against torch's D. The
# library is built here and carried (build/libtpgemm.so); run_tp.sh's `ninja build/libtpgemm.so` is answered by a
# stand-in that does nothing. Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
mkdir -p $OUT/r
OUT=$OUT/r timeout 200 bench/run_tp.sh --tp 2 --share-device --rounds 1 --window 0.2 --only 70B-o,8B-o,70B-fc2 \
  --alt-copy-engine-partials > $OUT/r/run.log 2>&1
echo "run_tp rc=$?"
cd $OUT/r && python3 - <<'PY'
import glob, json
for f in sorted(glob.glob("tp2*_shared.json")):
    for r in json.load(open(f)):
        alts = {k: v.get("check") for k, v in (r.get("alt") or {}).items()}
        print(f"{f:20} {r['name']:10} {r.get('config', '?'):22} check {r.get('check')} alts {alts} "
              f"errors {list((r.get('errors') or {}).keys())}")
PY
grep -iE "error|Traceback|no alt" $OUT/r/run.log $OUT/r/*_run.log 2>/dev/null | head -10
cd $OUT && tar czf records.tgz r && rm -rf r
