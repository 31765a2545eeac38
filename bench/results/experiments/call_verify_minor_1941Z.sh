#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the committed tree after the interleaved walk (stage_minor, ping-pong rule):
# the sanitizers (memcheck, racecheck, synccheck, initcheck; the rings group runs the self-test instances' cases,
# the three interleaved rings among them) and the GPU pytest with both ranks on one GPU.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
RUN_ALL_BUDGET_S=420 bash tests/gpu/run_all.sh --tp 2 --share-device --skip seed_f16acc,tier2,local_gemm,tp,tune \
  > $OUT/run_all.log 2>&1
echo "run_all rc=$?" >> $OUT/run_all.log
tail -12 $OUT/run_all.log
