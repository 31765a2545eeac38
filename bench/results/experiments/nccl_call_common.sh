#!/bin/bash
# Sourced by the call_nccl_*.sh scripts (one device call each, nvidia-h200): the environment of the NCCL transport's
# one-GPU runs and `step NAME TIMEOUT COMMAND...`, which runs COMMAND into $OUT/NAME.log and appends a summary line.
# PyTorch's NCCL is the library (TPG_NCCL_LIBRARY); gpu_epochs / gpu_multiprocess --nccl give each rank its own NCCL
# host themselves. (Factored out of the scripts after they ran; the commands are those that ran.)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
[ -f "$lib" ] || lib=$(find / -name 'libnccl.so.2' 2>/dev/null | head -1)
export TPG_NCCL_LIBRARY=$lib
echo "TPG_NCCL_LIBRARY=$TPG_NCCL_LIBRARY" | tee "$OUT/env.txt"
nvidia-smi -L | tee -a "$OUT/env.txt"
step() { # name timeout command...
    local name=$1 t=$2; shift 2
    local t0=$(date +%s)
    timeout "$t" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name rc=$rc $(( $(date +%s) - t0 ))s: $(grep -E 'passed|PASSED|FAILED|after' "$OUT/$name.log" | tr '\n' ' ' | cut -c1-600)" | tee -a "$OUT/summary.txt"
}
