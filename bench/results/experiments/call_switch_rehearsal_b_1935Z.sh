#!/bin/bash
# One device call (nvidia-h200, 1 GPU), the second half of call_switch_rehearsal_1915Z.sh: the reduce-scatter
# defaults switched to copy-engine partials, then the GPU pytest's cases that failed there (shared-device runs without
# 32 queues, fixed in tests/test_gpu.py) and the GPU pytest's shared-device cases again, and tier 2's groups that run
# the defaults beyond its TP = 2 group (which passed there), every rank on the one GPU. Records in $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; mkdir -p $R; trap 'tar -C $OUT -czf $OUT/records.tgz r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a $OUT/summary.txt; }
python3 bench/x2/ce_default.py > $R/switch.log 2>&1; at switch $?
ninja > $R/build.log 2>&1 && ninja tests bench >> $R/build.log 2>&1; at build $?
TPG_REQUIRE_GPUS=1 timeout 330 python3 -m pytest -q -rs tests/test_gpu.py -k "shared_device or shared-device" \
    > $R/gpu_pytest.log 2>&1; at "gpu pytest (shared)" $?
tail -3 $R/gpu_pytest.log
OUT=$R/t2 TIER2_GROUPS=scalars,overlap_barriers,gathered,one_hop,pull_partials,few_rows,stream_k \
    timeout $((560 - ($(date +%s) - t0))) bash tests/gpu/run_tier2.sh --tp 2 --share-device > $R/tier2.log 2>&1
at "tier2 shared (the defaults' groups)" $?
grep -A14 "^group" $R/tier2.log
