#!/bin/bash
# Device call (1 x H200): the CPU-only capture fixes (d60ef84..1715172) and the full one-GPU rehearsal.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/logs; mkdir -p $L
date -u; nvidia-smi -L; nvidia-smi --query-gpu=utilization.gpu,power.draw,temperature.gpu --format=csv
step() { local name=$1 lim=$2; shift 2; local t0=$(date +%s)
  timeout $lim "$@" > $L/$name.log 2>&1; local rc=$?
  printf '%-24s rc=%-3s %4s s  %s\n' "$name" "$rc" "$(( $(date +%s) - t0 ))" "$(tail -1 $L/$name.log | cut -c1-100)"; }
step epochs2_capture 120 build/tests/gpu_epochs 2 --share-device --capture
step epochs4_capture 150 build/tests/gpu_epochs 4 --share-device --capture
step epochs2_proc_capture 150 build/tests/gpu_epochs 2 --share-device --processes --capture
step torch_capture 150 python3 tests/gpu/torch_capture.py
OUT=$L/run_all RUN_ALL_BUDGET_S=380 tests/gpu/run_all.sh --tp 2 --share-device --skip local_gemm,tune > $L/run_all.log 2>&1
echo "run_all rc=$?"; cat $L/run_all/summary.txt 2>/dev/null
date -u
cd $OUT && tar czf logs.tgz logs && rm -rf logs
