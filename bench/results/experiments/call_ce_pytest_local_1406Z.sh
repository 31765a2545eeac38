#!/bin/bash
# One device call (nvidia-h200, 1 GPU) on the tree with the copy chains on tile-row counts (the kernels' flag flush
# now reads tpg_gemm_params.row_counts): (1) the GPU pytest (tests/test_gpu.py; its one-GPU cases, the _ce twins'
# checks, gpu_epochs with both _ce twins, the timeouts, the refusal without 32 queues among them); (2) the local GEMM
# on three problems (`local_gemm --quick --aa`) against cuBLASLt in the same run - the TP = 1 kernels changed only in
# the flush's code, which a TP = 1 call never runs: a check that nothing moved (committed table: sustained 8B-qkv
# 0.983, 8B-o 0.985, gemm-8192 1.014). The fixture's `ninja` is a stand-in that does nothing (the carried build/ is
# not whole). Carry build/{tpgemm,libtpgemm.so}, build/tests/gpu_*, build/bench/local_gemm.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 TPG_REQUIRE_GPUS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
timeout 280 python3 -m pytest -q -rs tests/test_gpu.py > $OUT/gpu_pytest.log 2>&1; echo "pytest rc=$?"
grep -E "passed|failed|FAILED" $OUT/gpu_pytest.log | tail -8
timeout 200 build/bench/local_gemm --quick --aa --budget-s 150 --out $OUT/local_gemm.json > $OUT/local_gemm.log 2>&1
echo "local_gemm rc=$?"; grep -E "^\|" $OUT/local_gemm.log | tail -8
