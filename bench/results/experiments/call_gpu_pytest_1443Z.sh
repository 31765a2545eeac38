#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the GPU pytest (tests/test_gpu.py) on the final tree of the session (the copy
# chains on tile-row counts, the zeros beside the last band, tpg_op_sync's check of the counts). Its one-GPU cases:
# the _ce twins' checks, gpu_epochs with both _ce twins (plain, captured, processes), the timeouts, the refusal
# without 32 queues, and every case that ran before. The fixture's `ninja` is a stand-in that does nothing (the
# carried build/ is not whole). Carry build/{tpgemm,libtpgemm.so}, build/tests/gpu_*.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 TPG_REQUIRE_GPUS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
timeout 280 python3 -m pytest -q -rs tests/test_gpu.py > $OUT/gpu_pytest.log 2>&1; echo "pytest rc=$?"
grep -E "passed|failed|FAILED" $OUT/gpu_pytest.log | tail -8
