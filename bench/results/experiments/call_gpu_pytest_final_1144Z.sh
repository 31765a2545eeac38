#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the GPU pytest (tests/test_gpu.py) again on the final tree (after the review:
# 32 queues for the _ce runs only, the AND waits) - its one-GPU cases: the _ce twins' checks, gpu_epochs with both
# _ce twins (plain, captured, processes), the missing-peer timeouts with copy-engine partials, the refusal without
# 32 queues, and every case that ran before. The pytest's limit (265 s) fits the session's last device time.
# The binaries are built here and carried (build/tpgemm, build/libtpgemm.so, build/tests/gpu_*); the tests' fixture
# runs `ninja` for them, which a stand-in that does nothing answers here (the carried build/ is not whole: 112 MiB).
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 TPG_REQUIRE_GPUS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
timeout 265 python3 -m pytest -q -rs tests/test_gpu.py > $OUT/gpu_pytest.log 2>&1; echo "pytest rc=$?"
grep -E "passed|failed|FAILED|SKIPPED" $OUT/gpu_pytest.log | tail -30
