#!/bin/bash
# One device call (nvidia-h200 or nvidia-h100-x1, 1 GPU, ~7 min) for the 2026-12-05 (05:52Z-) session's changes,
# which no GPU has run (docs/perf_notes/2026-12-05-c.md): the multi-process paths (a failed collective create closes
# every rank's mappings before any rank frees; tpg_op_set_copy_chunks collective over NCCL, wire v7; tpg_op_destroy's
# wait result), the teardown's cleared errors and status codes, the epilogue's `if constexpr` (same cubins here),
# the stream-K finisher's count wait (tier 2's stream_k group),
# through the GPU pytest's one-GPU and shared-device cases (gpu_multiprocess --share-device with and without --nccl
# among them); then tier 2's quick groups with every rank on the one GPU (the file is tier2_shared_tp2_quick.json now)
# and the --model plans' modes column against a run. Records tarred into $OUT/records.tgz. From the repository root:
#   bash bench/results/experiments/call_session_k_checks.sh
OUT=${OUT:-build/session_k}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
ninja > "$R/build.log" 2>&1 && ninja tests bench >> "$R/build.log" 2>&1; at build $?
TPG_REQUIRE_GPUS=1 timeout 420 python3 -m pytest -q -rA tests/test_gpu.py > "$R/gpu_pytest.log" 2>&1
at "gpu pytest (one GPU: its own and the shared-device cases)" $?; tail -3 "$R/gpu_pytest.log"
OUT=$R/tier2 TIER2_BUDGET_S=100 timeout 170 tests/gpu/run_tier2.sh --tp 2 --share-device --quick \
    > "$R/tier2_quick.log" 2>&1; at "tier 2 quick, shared TP = 2" $?; tail -4 "$R/tier2_quick.log"
for t in 128 16384; do
    timeout 120 build/tpgemm --model llama3-70b --tp 2 --tokens $t --share-device --gather-copy-engine --rs-ring \
        > "$R/model_$t.log" 2>&1; at "--model llama3-70b --tokens $t (modes column)" $?; cat "$R/model_$t.log"
done
cat "$OUT/summary.txt"
