#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the shipped state at the start of the 2026-12-04 (20:49Z-) session, for
# what 1fdc4dd-357534b left unrun on a GPU: the TP benchmark's own tests under torch (the four --link-copies fault
# cases), then the GPU pytest's shared-device cases (--share-device's own CUDA_DEVICE_MAX_CONNECTIONS=32, gpu_epochs
# and gpu_timeout by route, the configs by route). Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; mkdir -p $R; trap 'tar -C $OUT -czf $OUT/records.tgz r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a $OUT/summary.txt; }
ninja > $R/build.log 2>&1 && ninja tests bench >> $R/build.log 2>&1; at build $?
timeout 150 python3 -m pytest -q -rs tests/test_tp_bench_collectives.py tests/test_tp_bench.py \
    > $R/bench_pytest.log 2>&1
at "bench pytest" $?; tail -4 $R/bench_pytest.log
TPG_REQUIRE_GPUS=1 timeout $((570 - ($(date +%s) - t0))) python3 -m pytest -q -rs tests/test_gpu.py \
    -k "shared_device or shared-device" > $R/gpu_pytest.log 2>&1
at "gpu pytest (shared)" $?; tail -3 $R/gpu_pytest.log
