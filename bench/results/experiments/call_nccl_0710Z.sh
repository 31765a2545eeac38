#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the GPU pytest cases of the NCCL transport and the flag kernel, then the TP
# benchmark's --alt-nccl on one GPU (a smoke run: processes take turns on the GPU, times mean nothing).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/env.txt"
ninja build/libtpgemm.so 2>&1 | tail -1
t0=$SECONDS
timeout 240 python3 -m pytest -q -rs tests/test_gpu.py -k 'nccl or transfer_flag' > "$OUT/pytest_nccl.log" 2>&1
echo "pytest rc=$? $((SECONDS - t0))s: $(tail -1 "$OUT/pytest_nccl.log")" | tee -a "$OUT/summary.txt"
t0=$SECONDS
OUT="$OUT/tp" timeout 280 bench/run_tp.sh --tp 2 --share-device --alt-nccl --only 8B-qkv,8B-o --rounds 1 --window 0.3 \
    --burst-idle 0 > "$OUT/tp_smoke.log" 2>&1
echo "tp smoke rc=$? $((SECONDS - t0))s: $(grep -E 'check|alt nccl' "$OUT/tp_smoke.log" | tr '\n' ' ' | cut -c1-700)" | tee -a "$OUT/summary.txt"
echo; cat "$OUT/summary.txt"
