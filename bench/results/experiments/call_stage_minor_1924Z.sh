#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the interleaved walk of one-wave reduce-scatter rings (p.stage_minor).
# (1) self-test cases (three new stage-minor rings per instance) of the shipped reduce-scatter kernels and pp64g1;
# (2) the ring's parts with "minor" (the ring, stages interleaved) at few tokens, pp64g1 (pp64tma with raster groups
# of one row: the stage-major placement in a plain GEMM) beside; (3) tier 2 at TP = 2 with both ranks on one GPU
# (tp2, variants: some small shapes' rings are one wave at the 63 SMs a rank, so they run interleaved); (4) the CLI on
# six small rings (checked; the runs do not print the walk order).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
timeout 100 $S --no-perf --only pp64tma,pp128tma,wide3tma,e4m3tma,wide3p32,pp128p32,pp64g1 > $OUT/cases.log 2>&1
echo "rc=$?" >> $OUT/cases.log
timeout 200 $S --no-perf --no-cases --rs-parts --rs-few --only pp64tma,pp128tma,wide3tma,pp64g1 \
  --problem 70B-fc2-m128,70B-fc2-m256,8B-o-m256,8B-o-m512,70B-o-m512,405B-fc2-m128,70B-o-m128 > $OUT/parts.log 2>&1
echo "rc=$?" >> $OUT/parts.log
mkdir -p $OUT/t2
OUT=$OUT/t2 TIER2_GROUPS=tp2,variants STEP_BUDGET_S=170 timeout 175 bash tests/gpu/run_tier2.sh --tp 2 --share-device \
  > $OUT/tier2_tp2.log 2>&1
echo "tier2 rc=$?" >> $OUT/tier2_tp2.log; rm -rf $OUT/t2
for mnk in "128 2048 8192" "256 4096 4096" "512 1024 256"; do set -- $mnk
  for tp in 2 4; do
    build/tpgemm --schedule ReduceScatter1D_TilingA_RotatingC --tp $tp --share-device --m $1 --n $2 --k $3 \
      --iterations 20 --timeout-ms 3000 > $OUT/cli_m$1_tp$tp.log 2>&1; echo "rc=$?" >> $OUT/cli_m$1_tp$tp.log
  done
done
grep -E "stage-minor" $OUT/cases.log | head -30; tail -2 $OUT/cases.log
grep -A40 "ring's parts" $OUT/parts.log | grep "^|"; tail -1 $OUT/parts.log
grep -A4 "^group" $OUT/tier2_tp2.log; tail -1 $OUT/tier2_tp2.log
for f in $OUT/cli_*.log; do echo "$f: $(grep -E 'walk order|PASS|FAIL|check' $f | head -3 | tr '\n' ' ') $(tail -1 $f)"; done
