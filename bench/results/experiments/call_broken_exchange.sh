#!/bin/bash
# One device call (1 GPU, ~2 min): gpu_multiprocess step 4c (every rank's bootstrap all-gather fails in
# tpg_op_create: TPG_ERR_BOOTSTRAP, the op's memory left allocated and said so, the context still destroyed, a fresh
# one working after), over shared memory at TP 2 and 4 and over NCCL, every rank on the GPU. From the repository root:
#   bash bench/results/experiments/call_broken_exchange.sh
OUT=${OUT:-build/broken_exchange}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
logged "gpu pytest (steps 4, 4b, 4c on one GPU)" gpu_pytest.log 200 env TPG_REQUIRE_GPUS=1 \
    CUDA_DEVICE_MAX_CONNECTIONS=32 python3 -m pytest -q -rA tests/test_gpu.py -k \
    "test_processes_on_a_shared_device or nccl_transport_missing_peer_on_a_shared_device"
grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$R/gpu_pytest.log" | cut -c1-160
logged "gpu_multiprocess --share-device --nccl" mp_nccl.log 90 build/tests/gpu_multiprocess --share-device --nccl
grep -hE "bootstrap all-gather failed|PASSED|FAIL" "$R/mp_nccl.log" | cut -c1-300
cat "$OUT/summary.txt"
