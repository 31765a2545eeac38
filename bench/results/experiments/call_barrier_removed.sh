#!/bin/bash
# One device call (1 GPU, ~4 min): after the system memory barrier between each copy and its flag was removed
# (2026-12-06: with it, ag_rota_bf16_tp8 --copy-chunks 4 / 32 timed out with eight ranks sharing an H100; without, it
# passed): the shared-device config cases (every route of partials, copy pieces at TP = 8), tier 2's copy groups, and
# the local-modes cases of tp_bench's collectives (torch on the CPU). From the repository root:
#   bash bench/results/experiments/call_barrier_removed.sh
OUT=${OUT:-build/barrier_removed}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
logged build build.log 150 ninja build/tpgemm build/libtpgemm.so tests
logged "gpu pytest (config cases)" gpu_pytest_cases.log 150 "${GPU_ENV[@]}" python3 -m pytest -q -rA tests/test_gpu.py \
    -k "passes_check"
grep -E "^(PASSED|FAILED|ERROR)" "$R/gpu_pytest_cases.log" | cut -c1-160
tail -1 "$R/gpu_pytest_cases.log"
logged "tier 2 --share-device --quick (copy groups)" tier2_quick.log 150 env OUT="$R/t2" TIER2_BUDGET_S=120 \
    TIER2_GROUPS=copy_chunks,overlap_barriers,gathered,trace bash tests/gpu/run_tier2.sh --share-device --quick
tail -9 "$R/tier2_quick.log" | cut -c1-160
logged "pytest (torch on the CPU: the local modes)" cpu_torch_pytest.log 90 python3 -m pytest -q -rs \
    tests/test_tp_bench_collectives.py -k "local"
tail -2 "$R/cpu_torch_pytest.log"
cat "$OUT/summary.txt"
