#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the fused graphs with CUDA_DEVICE_MAX_CONNECTIONS=1 (one hardware queue a
# device, as Megatron-LM sets it for its own overlap), every rank on GPU 0 - the strictest form on one GPU: both ranks'
# graphs share that one queue. A graph branch queued behind a kernel that waits for it would hang until the device
# timeout (exit 4). (1) tier 2 --quick (every group on the small shapes; the _ce configs get 32 queues from the script,
# as they need on one GPU); (2) gpu_epochs plain / captured / processes; (3) the default picks of 70B-qkv and 70B-o
# with and without the barriers beside the GEMM, and the few-row walks (gathered, one-hop) at 128 rows.
# Carry build/tpgemm, build/tests/gpu_epochs, build/tests/gpu_multiprocess.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
mkdir -p $OUT/t2
OUT=$OUT/t2 timeout 300 bash tests/gpu/run_tier2.sh --tp 2 --share-device --quick > $OUT/tier2_quick.log 2>&1
echo "tier2 rc=$?" >> $OUT/tier2_quick.log
cp $OUT/t2/tier2.json $OUT/tier2_one_queue.json 2>/dev/null; rm -rf $OUT/t2
for a in "2" "2 --capture" "2 --processes"; do
  timeout 240 build/tests/gpu_epochs $a --share-device > $OUT/epochs_${a// /_}.log 2>&1
  echo "| gpu_epochs $a | rc=$? | $(tail -1 $OUT/epochs_${a// /_}.log | cut -c1-150) |"
done
summary() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('check'), 'max_error', r.get('max_error'), 'avg_ms', r.get('avg_ms'), r.get('error'))" "$1" 2>/dev/null || echo "no json"; }
run() { local name=$1; shift
  timeout 120 build/tpgemm --share-device "$@" --iterations 5 --warmup-iterations 2 --json > $OUT/$name.json 2> $OUT/$name.err
  echo "| $name | rc=$? | $(summary $OUT/$name.json) |"; }
run 70B-qkv --schedule AllGather1D_TilingCD_RotatingA --tp 2 --m 16384 --n 10240 --k 8192
run 70B-qkv-overlap --schedule AllGather1D_TilingCD_RotatingA --tp 2 --m 16384 --n 10240 --k 8192 --overlap-barriers
run 70B-o --schedule ReduceScatter1D_TilingA_RotatingC --tp 2 --m 16384 --n 8192 --k 8192
run 70B-o-overlap --schedule ReduceScatter1D_TilingA_RotatingC --tp 2 --m 16384 --n 8192 --k 8192 --overlap-barriers
run ag-m128 --schedule AllGather1D_TilingCD_RotatingA --tp 2 --m 128 --n 8192 --k 4096
run ag-m128-ce --schedule AllGather1D_TilingCD_RotatingA --tp 2 --m 128 --n 8192 --k 4096 --gather-copy-engine
run rs-m128 --schedule ReduceScatter1D_TilingA_RotatingC --tp 2 --m 128 --n 8192 --k 4096
run ag-tp4 --schedule AllGather1D_TilingCD_RotatingB --tp 4 --m 8192 --n 6144 --k 4096 --copy-chunks 4
run rs-tp4 --schedule ReduceScatter1D_TilingB_RotatingC --tp 4 --m 8192 --n 4096 --k 4096
grep -E "^(PASS|FAIL)" $OUT/tier2_quick.log | grep -c PASS; grep -E "^FAIL" $OUT/tier2_quick.log | head; tail -20 $OUT/tier2_quick.log
