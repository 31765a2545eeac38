#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the runtime fixes of a review (helper, 2026-12-04 ~18:00Z) on a GPU - the op
# waits on an event of its own recorded after each direct launch instead of the caller's stream (which the caller may
# destroy; the NCCL transport's launch event folded into it), tpg_op_sync clears the status word on the context's
# stream, tpg_op_set_rs_ring agrees across processes after the rebuild, a failed context leaves no CUDA error pending.
# gpu_timeout --share-device first (its new case: streams destroyed after the launch), then the whole GPU pytest
# (gpu_epochs plain / captured / --processes / --nccl, which switch the one-hop walk's ring between calls,
# gpu_multiprocess, torch capture, the missing-peer timeouts). Carry build/{tpgemm,libtpgemm.so} and
# build/tests/gpu_{epochs,multiprocess,pdl_chain,timeout,transfer_flags,racecheck_canary}.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 TPG_REQUIRE_GPUS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
timeout 60 build/tests/gpu_timeout 200 --share-device > $OUT/gpu_timeout.log 2>&1; echo "gpu_timeout rc=$?"
tail -4 $OUT/gpu_timeout.log
timeout 400 python3 -m pytest -q -rs tests/test_gpu.py > $OUT/gpu_pytest.log 2>&1; echo "gpu pytest rc=$?"
grep -E "passed|failed|FAILED|Error" $OUT/gpu_pytest.log | tail -6
