#!/bin/bash
# One device call (1 GPU, ~5 min): the whole GPU pytest on one GPU after this session's trace changes (its new case:
# a timed-out call traced, both comms; the runtime's copy-engine chains now call the trace hook, a no-op outside the
# trace build). TPG_REQUIRE_GPUS=1: a case that needs one GPU fails rather than skips. From the repository root:
#   bash bench/results/experiments/call_gpu_pytest_1722Z.sh
OUT=${OUT:-build/gpu_pytest}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
export TPG_REQUIRE_GPUS=1
timeout 300 ninja build/tpgemm build/libtpgemm.so tests > "$R/ninja.log" 2>&1; at "ninja" $?
timeout 400 python3 -m pytest -q -rs tests/test_gpu.py > "$R/gpu_pytest.log" 2>&1; at "GPU pytest" $?
grep -E "passed|failed|FAILED|Error" "$R/gpu_pytest.log" | tail -8
cat "$OUT/summary.txt"
