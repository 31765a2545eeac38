#!/bin/bash
# One device call (nvidia-h200, 1 GPU): A's TMA box trimmed to the launch's rows where it has fewer than a tile
# (runtime/src/params.c a_box_rows; the 1550Z call found the 64x128 ring's load floor 15.8 us at 16 rows against
# 10.5 at 64, same bytes: the zero fill of the box's out-of-bounds rows). (1) correctness: tier 2's new few_rows group
# (every shipped kernel at 12 rows in two batches, each schedule at 24 rows a stage) with the one_hop and gathered
# groups, every rank on the GPU, TP = 2 and 4; (2) the CLI's mean call time at M = 16-64, as in 1550Z; (3) the local
# GEMM at decode sizes against cuBLASLt (A/A control), the 1533Z problems that run 16 rows and one of 64.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
echo "== (1) tier 2"
for tp in 2 4; do
  OUT=$R/tier2_tp$tp TIER2_GROUPS=few_rows,one_hop,gathered TIER2_BUDGET_S=100 timeout 150 \
    tests/gpu/run_tier2.sh --tp $tp --share-device > $R/tier2_tp$tp.log 2>&1; echo "tp$tp rc=$?"
  tail -6 $R/tier2_tp$tp.log; done
echo "== (2) CLI mean call time"
for cfg in ag_rota_bf16_pp64_tp1 x_c64_tp1 x_c64_sk_tp1 ag_rota_bf16_wide_tp1; do
  for m in 16 32 48 64; do for nk in "8192 4096" "5120 8192"; do set -- $nk
    t=$(timeout 60 build/tpgemm --config $cfg --tp 1 --devices 0 --m $m --n $1 --k $2 --iterations 300 2>&1 | tee -a $R/cli.log | grep -E '^Avg runtime|FAIL|rror')
    echo "$cfg m=$m n=$1 k=$2 $t"; done; done; done
echo "== (3) local GEMM"
OUT=$R/lg timeout 260 bench/run_local_gemm.sh --dtype bf16 --aa --budget-s 230 \
  --configs ag_rota_bf16_pp64_tp1,ag_rota_bf16_wide_tp1,x_c64_sk_tp1 \
  --problems 70B-qkv-m16,70B-fc2-m16,70B-o-m16,8B-qkv-m16,70B-qkv-m64 > $R/lg.log 2>&1; echo "rc=$?"
grep -E "^\[" $R/lg/local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
