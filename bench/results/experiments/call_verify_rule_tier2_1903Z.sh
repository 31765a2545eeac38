#!/bin/bash
# One device call (nvidia-h200, 1 GPU): (1) the flag rule's committed form (c0d4ff1: units per stage from the walk's
# tiling; ping-pong 3 x grid) in the self-test cases of the shipped cooperative reduce-scatter kernels and the ring
# at 128-8192 tokens, rule (wide3tma) against before (wide3old); (2) the few-token ring's lead: DRAM bytes of the
# plain GEMM and the ring at 70B-fc2 M = 128 (ncu, warm-up launches: plain x2, ring x2 per kernel); (3) tier 2 with
# every rank on one GPU at TP = 2, in full.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
S=build/selftest/kernel_selftest
timeout 70 $S --no-perf --only wide3tma,fp16tma,e4m3tma,wide3p32 > $OUT/cases.log 2>&1; echo "rc=$?" >> $OUT/cases.log
timeout 90 $S --no-perf --no-cases --rs-few --only wide3tma,wide3old > $OUT/rs_few.log 2>&1; echo "rc=$?" >> $OUT/rs_few.log
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
timeout 120 $NCU --clock-control none -k regex:tpg_selftest --launch-count 8 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum \
  $S --no-perf --no-cases --rs-few --only pp128tma,pp64tma --problem 70B-fc2-m128 > $OUT/ncu_70B-fc2-m128.log 2>&1
echo "rc=$?" >> $OUT/ncu_70B-fc2-m128.log
mkdir -p $OUT/t2
OUT=$OUT/t2 STEP_BUDGET_S=270 timeout 275 bash tests/gpu/run_tier2.sh --tp 2 --share-device > $OUT/tier2_tp2.log 2>&1
echo "tier2 tp2 rc=$?" >> $OUT/tier2_tp2.log
cp $OUT/t2/tier2_shared_tp2.json $OUT/ 2>/dev/null; rm -rf $OUT/t2
tail -2 $OUT/cases.log; grep -E "^\| [0-9]+B-[a-z0-9]+-m(128|512|1024|2048) " $OUT/rs_few.log; tail -1 $OUT/rs_few.log
grep -E "tpg_selftest|gpu__time|dram__bytes|lts__t|^rc" $OUT/ncu_70B-fc2-m128.log | head -60
grep -A14 "^group" $OUT/tier2_tp2.log | tail -14; tail -1 $OUT/tier2_tp2.log
