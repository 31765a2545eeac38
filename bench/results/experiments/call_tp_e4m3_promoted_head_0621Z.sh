#!/bin/bash
# Device call (1 x H200) at 296c0c4+ (ag_rotb_e4m3_promoted without TP = 1): the TP = 1 promoted configs, one
# shared-device fused run of ag_rotb, and the TP bench's --dtype e4m3_promoted at world size 1.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs; mkdir -p $L
date -u; nvidia-smi -L
step() { local name=$1 lim=$2; shift 2; local t0=$(date +%s)
  timeout $lim "$@" > $L/$name.log 2>&1; local rc=$?
  printf '%-22s rc=%-3s %4s s  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$(grep -o 'Disposition: [A-Za-z]* (max error [0-9.e-]*' $L/$name.log || tail -1 $L/$name.log | cut -c1-110)"; }
for f in ag_rota rs_tila rs_tilb; do
  step ${f}_tp1 60 build/tpgemm --tp 1 --config ${f}_e4m3_promoted_tp1 --m 4096 --n 4096 --k 8192 --iterations 3
done
step ag_rotb_tp2 60 build/tpgemm --share-device --tp 2 --config ag_rotb_e4m3_promoted_tp2 --m 8192 --n 4096 --k 8192 --iterations 3
step tp1 120 env OUT=$L/tp1 bench/run_tp.sh --tp 1 --dtype e4m3_promoted --only 8B-qkv,8B-o --rounds 1 --window 0.3
cat $L/tp1/*_table.md 2>/dev/null | grep -E '^\| 8B|Checks'
date -u
cd $OUT && tar czf logs.tgz logs && rm -rf logs
