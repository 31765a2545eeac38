#!/bin/bash
# One device call (nvidia-h200, 1 GPU): tma_sync.cu with its second table (the loads streamed from HBM, as a GEMM's
# operands come, beside the L2-resident table of 0600Z again): does a staggered spread still cost the loads nothing
# when they come from HBM? (The 0604Z call: the GEMM's spread pushes staggered per CTA gained nothing.) Build here
# (the file's header), carry build/bench/tma_sync.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 200 build/bench/tma_sync > $OUT/tma_sync.log 2>&1; echo "tma_sync rc=$?"
sed -n '/streamed from HBM/,$p' $OUT/tma_sync.log |
  awk '/\| /{split($0,a,"|"); n=split(a[1],f," "); if (f[n]==0) print}'
