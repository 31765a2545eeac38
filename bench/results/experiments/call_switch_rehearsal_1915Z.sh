#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the reduce-scatter defaults switched to copy-engine partials
# (bench/x2/ce_default.py, as x2 call 4 would), built here, then tier 2 --quick and the GPU pytest with every rank
# on the one GPU: the suite must pass in the switched state as in the shipped one (tests/routes.py,
# tests/gpu/route_config.h). Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; mkdir -p $R; trap 'tar -C $OUT -czf $OUT/records.tgz r' EXIT
t0=$(date +%s); at() { echo "$1: exit $2 at $(($(date +%s) - t0)) s" | tee -a $OUT/summary.txt; }
python3 bench/x2/ce_default.py > $R/switch.log 2>&1; at switch $?
ninja > $R/build.log 2>&1 && ninja tests bench >> $R/build.log 2>&1; at build $?
build/tpgemm --list | grep -E "^rs_tila_bf16(_push)?_tp2 " > $R/list.txt; cat $R/list.txt
OUT=$R/t2 timeout 200 bash tests/gpu/run_tier2.sh --tp 2 --share-device --quick > $R/tier2.log 2>&1
at "tier2 quick shared" $?
tail -16 $R/tier2.log
TPG_REQUIRE_GPUS=1 timeout $((560 - ($(date +%s) - t0))) python3 -m pytest -q -rs tests/test_gpu.py \
    > $R/gpu_pytest.log 2>&1
at "gpu pytest" $?
tail -12 $R/gpu_pytest.log
