#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the registry's new by_name field (cb55162: tpg_config_desc grew a member, the
# picks now skip by_name configs instead of pulled / copy-engine ones) on a GPU - tier 2's quick run with both ranks
# on GPU 0 (default picks, the _pull / _ce twins by name in its variants group) and the GPU pytest; then the TP
# benchmark's own tests (run_all.sh's new bench_pytest step: torch with gloo, never run by CI). Carry build/tpgemm,
# build/libtpgemm.so and build/tests/gpu_{epochs,multiprocess,pdl_chain,timeout,transfer_flags,racecheck_canary}.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p /tmp/noninja && printf '#!/bin/sh\nexit 0\n' > /tmp/noninja/ninja && chmod +x /tmp/noninja/ninja
export PATH="/tmp/noninja:$PATH"
mkdir -p $OUT/t2
OUT=$OUT/t2 timeout 240 bash tests/gpu/run_tier2.sh --tp 2 --share-device --quick > $OUT/tier2_quick.log 2>&1
echo "tier2 quick rc=$?"; tail -3 $OUT/tier2_quick.log
TPG_REQUIRE_GPUS=1 timeout 200 python3 -m pytest -q -rs tests/test_gpu.py > $OUT/gpu_pytest.log 2>&1
echo "gpu pytest rc=$?"; grep -E "passed|failed|FAILED" $OUT/gpu_pytest.log | tail -4
timeout 200 python3 -m pytest -q -rs tests/test_tp_bench_collectives.py tests/test_tp_bench.py > $OUT/bench_pytest.log 2>&1
echo "bench pytest rc=$?"; tail -3 $OUT/bench_pytest.log
cd $OUT && tar czf t2.tgz t2 && rm -rf t2
