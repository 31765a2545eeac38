#!/bin/bash
# One device call (nvidia-h200, 1 GPU): gpu_epochs --share-device without 32 queues skips its three copy-engine runs
# with the reason instead of failing them (found at 15:20Z: with CUDA_DEVICE_MAX_CONNECTIONS=1 or unset it reported
# "8 passed, 3 failed", the failures being the designed refusal); then the whole GPU pytest (its new case runs that
# with one queue). The fixture's `ninja` is a stand-in that does nothing (the carried build/ is not whole).
# Carry build/{tpgemm,libtpgemm.so}, build/tests/gpu_*.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 TPG_REQUIRE_GPUS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 200 build/tests/gpu_epochs 2 --share-device --capture > $OUT/epochs_one_queue.log 2>&1
echo "gpu_epochs one queue captured rc=$?"; grep -v " ok$" $OUT/epochs_one_queue.log | tail -5
timeout 330 python3 -m pytest -q -rs tests/test_gpu.py > $OUT/gpu_pytest.log 2>&1; echo "pytest rc=$?"
grep -E "passed|failed|FAILED" $OUT/gpu_pytest.log | tail -8
