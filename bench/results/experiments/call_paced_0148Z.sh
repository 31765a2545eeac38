#!/bin/bash
# 2026-12-04 01:48Z, one device call (nvidia-h200, 1 GPU): paced pushes (tpg_op_set_paced_pushes, gemm_params.h
# pace_pushes) on one GPU - what pacing costs where the "remote" stores are local (the ring proxy's new "paced"
# variant beside the ring, on the anchors' reduce-scatter problems, for the shipped ping-pong 128x128 and 64x128 and
# the wide kernel with TMA-loaded partials), tier 2's new paced_pushes group at TP = 2 and 4 with the ranks on the GPU,
# the TP bench's --alt-paced-pushes path with both processes on the GPU (a smoke run: times meaningless), and the
# bench's collective-order tests (tests/test_tp_bench_collectives.py, torch on the CPU).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
timeout 300 build/selftest/kernel_selftest --no-perf --no-cases --rs-perf --only pp128tma,pp64tma,wide3tma \
  > $R/rs_perf.log 2>&1; echo "rs-perf rc=$?"
for tp in 2 4; do
  OUT=$R/t$tp TIER2_GROUPS=paced_pushes timeout 120 tests/gpu/run_tier2.sh --tp $tp --share-device > $R/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?"; tail -3 $R/tier2_tp$tp.log
done
OUT=$R/tp timeout 170 bench/run_tp.sh --tp 2 --share-device --rounds 1 --window 0.3 --only 70B-o,8B-o \
  --alt-paced-pushes > $R/tp_smoke.log 2>&1; echo "tp smoke rc=$?"; grep -iE "paced|check|error" $R/tp_smoke.log | tail -8
timeout 150 python3 -m pytest -q tests/test_tp_bench_collectives.py > $R/pytest_collectives.log 2>&1
echo "pytest collectives rc=$?"; tail -2 $R/pytest_collectives.log
grep -A12 "^## reduce-scatter on one GPU" $R/rs_perf.log
cd $OUT && tar czf records.tgz r && rm -rf r
