#!/bin/bash
# The command of the 1757Z device call (1 GPU, run inline, on the warm machine after call_ce_queues.sh): the GPU
# pytest's copy-engine, one-hop and shared-device cases, cut by its own 170 s bound (the device budget was nearly
# spent) - so the one failure it shows (the 13th case, test_ops_inside_torch_cuda_graphs_on_a_shared_device) has no
# reason in its log. From the repository root:
#   bash bench/results/experiments/call_ce_subset.sh
export TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32
mkdir -p "$OUT/r"
timeout 170 python3 -m pytest -q -rs tests/test_gpu.py -k "copy_engine or one_hop or shared_device" \
    > "$OUT/r/pytest_ce.log" 2>&1
echo "rc=$?"
tail -3 "$OUT/r/pytest_ce.log"
{ date -u; bash bench/x2/tree_hash.sh; nvidia-smi -L; } > "$OUT/r/provenance.txt" 2>&1
