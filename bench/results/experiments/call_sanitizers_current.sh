#!/bin/bash
# One device call (1 GPU, ~8 min): compute-sanitizer over the kernels as they are since 2026-12-05 (epochs compared
# within a window, the give-up word, the stream-K finisher's count wait, the promoting e4m3 128x160 and its "_rs"
# twin, the CUDA 12.x paths): the last sanitizer run was 2026-12-04 ~15:17Z (sanitizers_1510Z/).
#   1. run_sanitizers.sh with both ranks on one GPU as run_all.sh runs it: the canary, racecheck / synccheck /
#      initcheck on every kernel binary with a TP = 1 config, racecheck on the self-test's partial-reading rings.
#   2. memcheck and racecheck on the stream-K 64x128 at decode sizes, where tiles are split and finishers wait for
#      their contributors (the TP = 1 group's 512x1024x256 splits none), through the CLI's reference check.
# Carry build/tpgemm, build/tests/gpu_racecheck_canary, build/selftest/kernel_selftest (tests/gpu/kernel_selftest.sh).
#   bash bench/results/experiments/call_sanitizers_current.sh
OUT=${OUT:-build/sanitizers_current}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
OUT_SAN=$OUT/san
OUT=$OUT_SAN STEP_BUDGET_S=360 timeout 380 bash tests/gpu/run_sanitizers.sh --tp 2 --share-device \
    > "$R/sanitizers.log" 2>&1
at "run_sanitizers.sh --share-device" $?
cp "$OUT_SAN/sanitizers.json" "$OUT/" 2>/dev/null
tail -25 "$R/sanitizers.log"
# decode sizes: 32 rows of 8192 x 8192 and 16 of 4096 x 14336 split their few long tiles over the grid (split rule)
for shape in "--m 32 --n 8192 --k 8192" "--m 16 --n 4096 --k 14336"; do
    for tool in memcheck racecheck; do
        log="sk64_${tool}_${shape//[^0-9]/_}.log"
        # shellcheck disable=SC2086
        logged "$tool sk64 $shape" "$log" 150 compute-sanitizer --tool "$tool" \
            --print-limit 8 build/tpgemm --config ag_rota_bf16_sk64_tp1 $shape --iterations 1 --warmup-iterations 0
        grep -m6 -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|Invalid|check|split|FAIL" "$R/$log"
    done
done
rm -rf "$OUT_SAN"
cat "$OUT/summary.txt"
