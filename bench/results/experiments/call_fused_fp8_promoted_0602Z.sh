#!/bin/bash
# Device call (1 x H200): the fused fp8 configs with promotion (new), every rank on one GPU: self-test of the new
# _rs kernel, tier 2's variants group at TP = 2 (runs every non-default config), the CLI check at TP = 4 / 8, and the
# TP bench's e4m3 smoke with them as alt variants.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs; mkdir -p $L
date -u; nvidia-smi -L
step() { local name=$1 lim=$2; shift 2; local t0=$(date +%s)
  timeout $lim "$@" > $L/$name.log 2>&1; local rc=$?
  printf '%-22s rc=%-3s %4s s  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$(tail -1 $L/$name.log | cut -c1-110)"; }
step selftest 120 build/selftest/kernel_selftest --no-perf --only e4m3p8tma,e4m3p8
step tier2_variants 150 env OUT=$L/tier2 TIER2_GROUPS=variants tests/gpu/run_tier2.sh --tp 2 --share-device
grep -h 'promoted' $L/tier2_variants.log | head -20
for tp in 4 8; do for f in ag_rota ag_rotb rs_tila rs_tilb; do
  step ${f}_tp$tp 60 build/tpgemm --share-device --tp $tp --config ${f}_e4m3_promoted_tp$tp --m 8192 --n 4096 --k 8192 --iterations 3
done; done
step tp_smoke 170 env OUT=$L/tp bench/run_tp.sh --tp 2 --share-device --dtype e4m3 --only 8B-qkv,8B-o --rounds 1 --window 0.3 --alt-config ag_rota_e4m3_promoted,rs_tila_e4m3_promoted
date -u
cd $OUT && tar czf logs.tgz logs && rm -rf logs
