#!/bin/bash
# One device call (1 GPU, ~8 min): the GPU tests strengthened after a review of them (2026-12-06, not yet run on a
# GPU): the fp8 scales with a product other than 1 (0.75 x 3; 1.5 x 0.25 on an all-gather), beta -0.75 where C is read
# (the shared-device config cases, every tier-2 group, the self-test's alpha/beta and ring-with-C cases), the sampled
# reference check's negative control (rows 32..63 of a rank's D overwritten), the PDL chain's checked copies and the
# trace case's guard, the pulls self-test's slots poisoned, the barrier epochs' counters. Carry
# build/selftest/kernel_selftest (built here: `bash tests/gpu/kernel_selftest.sh`, or its host objects relinked). From
# the repository root:
#   bash bench/results/experiments/call_session_m.sh
OUT=${OUT:-build/session_m}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
GPU_ENV=(env TPG_REQUIRE_GPUS=1 CUDA_DEVICE_MAX_CONNECTIONS=32)
logged build build.log 150 ninja build/tpgemm build/libtpgemm.so tests
# a self-test binary from before these changes would run the old cases and pass
strings build/selftest/kernel_selftest | grep -q "beta-.75" || at "build/selftest/kernel_selftest is stale (no beta -0.75)" 1
logged "kernel_selftest --no-perf" selftest.log 150 build/selftest/kernel_selftest --no-perf
grep -E "beta-.75|FAIL|PASSED" "$R/selftest.log" | tail -4 | cut -c1-160
logged "kernel_selftest --pulls (slots poisoned before the held-SMs run)" selftest_pulls.log 200 \
    build/selftest/kernel_selftest --no-perf --no-cases --pulls
grep -E "FAIL|PASSED" "$R/selftest_pulls.log" | tail -3 | cut -c1-160
logged "gpu pytest (config cases, negative controls)" gpu_pytest_cases.log 240 "${GPU_ENV[@]}" python3 -m pytest -q \
    -rA tests/test_gpu.py -k "passes_check or wrong_d or wrong_band"
grep -E "^(PASSED|FAILED|ERROR)" "$R/gpu_pytest_cases.log" | cut -c1-160
logged gpu_pdl_chain gpu_pdl_chain.log 120 build/tests/gpu_pdl_chain
logged "gpu_barrier_epochs (the counters checked too)" gpu_barrier_epochs.log 60 build/tests/gpu_barrier_epochs
# the groups that read C (~100 runs, ~90 s on one GPU; variants and tp1 run beta 0)
logged "tier 2 --share-device --quick (beta -0.75)" tier2_quick.log 260 env OUT="$R/t2" TIER2_BUDGET_S=180 \
    TIER2_GROUPS=scalars,copy_chunks,overlap_barriers,gathered,one_hop,pull_partials,few_rows,stream_k,trace \
    bash tests/gpu/run_tier2.sh --share-device --quick
tail -22 "$R/tier2_quick.log" | cut -c1-160
cat "$OUT/summary.txt"
