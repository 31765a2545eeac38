#!/bin/bash
# Device call (1 x H200): the TP benchmark's --dtype e4m3_promoted (new) - at world size 1 (torch's async-TP scaled
# ops without fast accumulation, a group of one) and with both processes on one GPU; the TP = 1 promoted configs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs; mkdir -p $L
date -u; nvidia-smi -L
step() { local name=$1 lim=$2; shift 2; local t0=$(date +%s)
  timeout $lim "$@" > $L/$name.log 2>&1; local rc=$?
  printf '%-22s rc=%-3s %4s s  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$(tail -1 $L/$name.log | cut -c1-110)"; }
for f in ag_rota ag_rotb rs_tila rs_tilb; do
  step ${f}_tp1 60 build/tpgemm --tp 1 --config ${f}_e4m3_promoted_tp1 --m 4096 --n 4096 --k 8192 --iterations 3
done
step tp1 150 env OUT=$L/tp1 bench/run_tp.sh --tp 1 --dtype e4m3_promoted --only 8B-qkv,8B-o --rounds 1 --window 0.3
step tp2_shared 150 env OUT=$L/tp2 bench/run_tp.sh --tp 2 --share-device --dtype e4m3_promoted --only 8B-qkv,8B-o --rounds 1 --window 0.3
cat $L/tp1/*_table.md $L/tp2/*_table.md 2>/dev/null | head -40
date -u
cd $OUT && tar czf logs.tgz logs && rm -rf logs
