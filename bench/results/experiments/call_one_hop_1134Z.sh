#!/bin/bash
# One device call (nvidia-h200, 1 GPU), every rank on the one GPU: the one-hop reduce-scatter walk (one GEMM of all M
# rows into the rank's own slots, then a REDUCE kernel of every rank's partial; runtime/src/one_hop.h) against the
# ring (--rs-ring). Built with TPG_ONE_HOP_MAX_ROWS 256 so that 16-256 rows a stage run one-hop (the rule's bound is
# what this call measures). Correctness: tier 2's one_hop group at TP = 2, 4, 8; gpu_timeout --few-tokens (a missing
# peer in the one-hop walk, both graphs). Then whole-call times of both walks, the reduce-scatter anchors' N and K,
# 16 / 64 / 128 / 256 rows a stage, TP = 2, 4, 8, alternating, 2 rounds (the first checked). A proxy: a peer's
# partial is this GPU's memory and the ranks share its SMs (132 / tp each); it measures the walks, not NVLink.
IFS=';' read -r -a SHAPES <<< "${SHAPES:-8192 8192 70B-o;4096 4096 8B-o;16384 53248 405B-fc2}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
for tp in 2 4 8; do
  TIER2_GROUPS=one_hop STEP_BUDGET_S=75 timeout 85 tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/one_hop_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/one_hop_tp$tp.log
  cp build/tier2/tier2_shared_tp$tp.json $OUT/one_hop_shared_tp$tp.json 2>/dev/null
done
for ov in "" --overlap-barriers; do
  timeout 60 build/tests/gpu_timeout 300 --share-device --few-tokens $ov > $OUT/timeout_few$ov.log 2>&1
  echo "rc=$?" >> $OUT/timeout_few$ov.log
done
for tp in 2 4 8; do
  for shape in "${SHAPES[@]}"; do
    set -- $shape
    for rows in 16 64 128 256; do
      m=$((rows * tp))
      for round in 1 2; do
        for mode in one_hop ring; do
          extra=(); [ $mode = ring ] && extra=(--rs-ring); [ $round = 2 ] && extra+=(--no-check)
          timeout 60 build/tpgemm --share-device --schedule ReduceScatter1D_TilingA_RotatingC --tp $tp --m $m --n $1 \
            --k $2 --iterations 200 --warmup-iterations 20 --json "${extra[@]}" \
            > $OUT/e2e_${3}_tp${tp}_r${rows}_${mode}_r$round.json 2> $OUT/e2e_${3}_tp${tp}_r${rows}_${mode}_r$round.err
        done
      done
    done
  done
done
python3 - <<'PY'
import glob, json, os, re, statistics
out = os.environ["OUT"]
print("== correctness")
for f in sorted(glob.glob(f"{out}/one_hop_tp*.log")) + sorted(glob.glob(f"{out}/timeout_few*.log")):
    t = open(f).read()
    tail = [l for l in t.splitlines() if re.search(r"passed|FAIL|rc=|missing peer|late peer", l)][-4:]
    print(os.path.basename(f), "|", " ; ".join(tail))
print("== end to end (shared GPU proxy): us per call, median of 2 rounds; ring / one-hop")
rows = {}
for f in glob.glob(f"{out}/e2e_*.json"):
    m = re.match(r".*/e2e_(.+)_tp(\d)_r(\d+)_(one_hop|ring)_r\d\.json", f)
    try:
        j = json.load(open(f))
        us = 1000.0 * j["avg_ms"]
        if bool(j["one_hop"]) != (m.group(4) == "one_hop"):
            print("MODE MISMATCH", f)
        if j["check"] not in ("passed", "skipped"):
            print("CHECK", j["check"], f)
    except Exception as e:
        us = None
        print("NO RESULT", f, e)
    rows.setdefault(m.groups()[:3], {}).setdefault(m.group(4), []).append(us)
for k in sorted(rows, key=lambda k: (k[0], int(k[1]), int(k[2]))):
    v = rows[k]
    med = {md: statistics.median([x for x in v.get(md, []) if x] or [float("nan")]) for md in ("one_hop", "ring")}
    print(f"{k[0]:9s} tp{k[1]} rows{k[2]:>4s}  one_hop {med['one_hop']:8.1f}  ring {med['ring']:8.1f}  "
          f"ratio {med['ring']/med['one_hop']:.3f}")
PY
cd $OUT && tar czf records.tgz --remove-files *.log *.json *.err gpu.txt && ls -la $OUT
