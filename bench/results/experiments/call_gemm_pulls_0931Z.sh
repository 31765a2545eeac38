#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the gathered all-gather walk with its GEMM pulling the shards itself
# (templates/kernels/pull_shards.cuh, the default since this call) against copy-engine nodes (--gather-copy-engine),
# every rank on the one GPU: the kernel self-test's cases (the prologue is in every kernel); correctness (gpu_epochs
# switching modes between calls, tier 2's gathered group at TP = 2, 4 and 8); end-to-end call times of both modes at
# few tokens (a proxy: a "peer" shard is the same GPU's memory, so the pulls read HBM, not NVLink, and the copy nodes
# run as copy kernels; what it shows is the graph's node chain against none). The 0927Z call's again, with the four
# all-gather anchors' N and K, its records packed into one file (0927Z's came back 8 of 90).
# SHAPES="N K name;..." (default the four anchors) and PACK=0 (no records.tgz) reproduce the 0927Z call.
IFS=';' read -r -a SHAPES <<< "${SHAPES:-10240 8192 70B-qkv;106496 16384 405B-fc1;57344 8192 70B-fc1;6144 4096 8B-qkv}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,temperature.gpu,power.draw,clocks.sm --format=csv > $OUT/gpu.txt
timeout 150 build/selftest/kernel_selftest --no-perf > $OUT/selftest_cases.log 2>&1; echo "rc=$?" >> $OUT/selftest_cases.log
for tp in 2 4; do
  timeout 150 build/tests/gpu_epochs $tp --share-device > $OUT/epochs_tp$tp.log 2>&1; echo "rc=$?" >> $OUT/epochs_tp$tp.log
done
timeout 150 build/tests/gpu_epochs 2 --share-device --capture > $OUT/epochs_capture_tp2.log 2>&1
echo "rc=$?" >> $OUT/epochs_capture_tp2.log
for tp in 2 4 8; do
  TIER2_GROUPS=gathered STEP_BUDGET_S=60 timeout 70 tests/gpu/run_tier2.sh --tp $tp --share-device \
    > $OUT/gathered_tp$tp.log 2>&1
  echo "rc=$?" >> $OUT/gathered_tp$tp.log
  cp build/tier2/tier2_shared_tp$tp.json $OUT/gathered_shared_tp$tp.json 2>/dev/null
done
# end-to-end proxy: M = 128 (and 64 x tp), the default pick, pulls vs copy nodes, alternating, 2 rounds (the first
# checked against the reference)
for tp in 2 4 8; do
  for shape in "${SHAPES[@]}"; do
    set -- $shape
    for m in 128 $((64 * tp)); do
      for round in 1 2; do
        for mode in pulls copy_engine; do
          extra=(); [ $mode = copy_engine ] && extra=(--gather-copy-engine); [ $round = 2 ] && extra+=(--no-check)
          timeout 60 build/tpgemm --share-device --schedule AllGather1D_TilingCD_RotatingA --tp $tp --m $m --n $1 \
            --k $2 --iterations 300 --warmup-iterations 30 --json "${extra[@]}" \
            > $OUT/e2e_${3}_tp${tp}_m${m}_${mode}_r$round.json 2> $OUT/e2e_${3}_tp${tp}_m${m}_${mode}_r$round.err
        done
      done
    done
  done
done
python3 - <<'PY'
import glob, json, os, re, statistics
out = os.environ["OUT"]
print("== correctness")
for f in sorted(glob.glob(f"{out}/epochs_*.log")) + sorted(glob.glob(f"{out}/gathered_tp*.log")):
    t = open(f).read()
    tail = [l for l in t.splitlines() if re.search(r"passed|FAIL|rc=", l)][-3:]
    print(os.path.basename(f), "|", " ; ".join(tail))
print(open(f"{out}/selftest_cases.log").read().splitlines()[-3:])
print("== end to end (shared GPU proxy): us per call, median of 2 rounds; copy_engine / pulls; checks")
rows = {}
for f in glob.glob(f"{out}/e2e_*.json"):
    m = re.match(r".*/e2e_(.+)_tp(\d)_m(\d+)_(pulls|copy_engine)_r\d\.json", f)
    try:
        j = json.load(open(f))
        us = 1000.0 * j["avg_ms"]
        if j["gemm_pulls"] != (m.group(4) == "pulls"):
            print("MODE MISMATCH", f)
        if j["check"] not in ("passed", "skipped"):
            print("CHECK", j["check"], f)
    except Exception as e:
        us = None
        print("NO RESULT", f, e)
    rows.setdefault(m.groups()[:3], {}).setdefault(m.group(4), []).append(us)
for k in sorted(rows, key=lambda k: (k[0], int(k[1]), int(k[2]))):
    v = rows[k]
    med = {mode: statistics.median([x for x in v.get(mode, []) if x] or [float("nan")]) for mode in ("pulls", "copy_engine")}
    print(f"{k[0]:9s} tp{k[1]} m{k[2]:>4s}  pulls {med['pulls']:8.1f}  copy {med['copy_engine']:8.1f}  ratio {med['copy_engine']/med['pulls']:.3f}")
PY
# one file back (the device returns a limited number of files)
[ "${PACK:-1}" = 0 ] || { cd $OUT && tar czf records.tgz --remove-files *.log *.json *.err gpu.txt && ls -la $OUT; }
