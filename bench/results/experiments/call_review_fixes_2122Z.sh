#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the review fixes of the 2026-12-04 (20:49Z-) session on a GPU. The GPU
# pytest's shared-device and trace cases: gpu_epochs now counts the runs that pass (and checks their sum against the
# plan), the CLI's report of a check that never ran, every op's setup fills on a private stream (buffers, stream-K
# workspace, tile orders, trace buffers), and over NCCL a rank that refuses before joining fails every rank's
# context (gpu_multiprocess --share-device --nccl, step 0). Then a mutant of gpu_epochs that runs nothing, which the
# pytest case must now fail. Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; mkdir -p $R; trap 'tar -C $OUT -czf $OUT/records.tgz r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a $OUT/summary.txt; }
ninja > $R/build.log 2>&1 && ninja tests bench >> $R/build.log 2>&1; at build $?
TPG_REQUIRE_GPUS=1 timeout 420 python3 -m pytest -q -rs tests/test_gpu.py -k "shared_device or shared-device" \
    > $R/gpu_pytest.log 2>&1
at "gpu pytest (shared)" $?; tail -3 $R/gpu_pytest.log
# the trace build (its buffers now filled on a private stream, rearmed by each rank's own size) on both schedules
for s in ag rs; do
    cfg=$([ $s = ag ] && echo ag_rota_bf16_tp2 || echo rs_tila_bf16_push_tp2)
    grep -q "rs_tila_bf16_push_tp2" generated/registry.c || cfg=${cfg/_push/}
    timeout 120 build/trace/tpgemm --share-device --config $cfg --m 4096 --n 4096 --k 4096 --trace $R/trace_$s.json \
        > $R/trace_$s.log 2>&1
    at "trace $cfg" $?; grep -E "Disposition|Error" $R/trace_$s.log
done
# the mutant: run_all_schedules returns at once; the binary must now say so and exit 1
sed -i 's/^static int run_all_schedules(tpg_ctx \*ctx, int tp, int capture, int nccl, int skip_carried) {/&\n    if (tp > 0) return 0;/' \
    tests/gpu/test_epochs.c
ninja build/tests/gpu_epochs > $R/mutant_build.log 2>&1
CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 120 build/tests/gpu_epochs 2 --share-device > $R/mutant.log 2>&1
at "mutant gpu_epochs (must be 1)" $?; tail -3 $R/mutant.log
git checkout tests/gpu/test_epochs.c && ninja build/tests/gpu_epochs >> $R/mutant_build.log 2>&1
