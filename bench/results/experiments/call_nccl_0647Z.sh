#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the NCCL transport on one GPU - every rank its own process and its own
# NCCL "host" (gpu_epochs --nccl sets NCCL_HOSTID per rank), NCCL's socket transport over loopback - then the
# peer transport's multi-process and single-process epochs as a regression check.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
[ -f "$lib" ] || lib=$(find / -name 'libnccl.so.2' 2>/dev/null | head -1)
export TPG_NCCL_LIBRARY=$lib
echo "TPG_NCCL_LIBRARY=$TPG_NCCL_LIBRARY" | tee "$OUT/env.txt"
nvidia-smi -L | tee -a "$OUT/env.txt"
ninja build/tests/gpu_epochs 2>&1 | tail -2
step() { # name timeout args...
    local name=$1 t=$2; shift 2
    local t0=$(date +%s)
    timeout "$t" build/tests/gpu_epochs "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name rc=$rc $(( $(date +%s) - t0 ))s: $(grep -E 'passed|FAILED' "$OUT/$name.log" | tr '\n' ' ' | cut -c1-200)" | tee -a "$OUT/summary.txt"
}
step nccl_tp2 150 2 --share-device --processes --nccl
step nccl_tp2_capture 150 2 --share-device --processes --nccl --capture
step nccl_tp4 180 4 --share-device --processes --nccl
step peer_tp2_processes 120 2 --share-device --processes
step peer_tp2 60 2 --share-device
echo; cat "$OUT/summary.txt"
