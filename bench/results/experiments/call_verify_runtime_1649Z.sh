#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the runtime changes of 2026-12-02 ~15:55Z-17:10Z on a GPU for the first time
# (a context-less thread's device restore, the native-atomics peer check, the NCCL abort thread's device, tensors
# and streams of another GPU refused, gpu_multiprocess at --tp N): the one-GPU rehearsal of the x2 call 1 (every
# step of tests/gpu/run_all.sh but the local GEMM, the TP bench and tune, every rank on GPU 0), then the
# multi-process test at TP = 4 / 8 with the processes on one GPU, and over NCCL at TP = 4.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
O=/tmp/o; mkdir -p $O
OUT=$O/all RUN_ALL_BUDGET_S=470 bash tests/gpu/run_all.sh --tp 2 --share-device --skip local_gemm,tp,tune > $O/run_all.log 2>&1
echo "run_all rc=$?" >> $O/run_all.log
for tp in 4 8; do
  timeout 90 build/tests/gpu_multiprocess --tp $tp --share-device > $O/mp_tp$tp.log 2>&1; echo "mp tp$tp rc=$?" >> $O/mp_tp$tp.log
done
NCCL_LIB=$(python3 -c "import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], 'lib', 'libnccl.so.2'))" 2>/dev/null)
TPG_NCCL_LIBRARY=${TPG_NCCL_LIBRARY:-$NCCL_LIB} timeout 100 build/tests/gpu_multiprocess --tp 4 --share-device --nccl \
  > $O/mp_nccl_tp4.log 2>&1; echo "mp nccl tp4 rc=$?" >> $O/mp_nccl_tp4.log
cp $O/all/summary.txt $O/all/all.tar.gz $O/*.log $OUT/ 2>/dev/null
tail -14 $O/run_all.log; for f in $O/mp_*.log; do echo "== $f"; tail -4 $f; done
