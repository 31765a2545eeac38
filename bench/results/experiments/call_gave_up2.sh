#!/bin/bash
# One device call (1 GPU, ~1 min): call_gave_up.sh's pytest step again after its test read the summary by pid, not
# by rank (KeyError at 1702Z; the traces themselves were right). From the repository root:
#   bash bench/results/experiments/call_gave_up2.sh
OUT=${OUT:-build/gave_up2}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
timeout 300 ninja build/tpgemm build/trace/tpgemm build/tests/gpu_timeout build/trace/tests/gpu_timeout \
    > "$R/ninja.log" 2>&1; at "ninja" $?
timeout 200 python3 -m pytest -q -rs tests/test_gpu.py -k "timed_out_call or missing_peer_times_out_on_a_shared" \
    > "$R/pytest.log" 2>&1; at "pytest (timed-out call traced; missing peer, shared)" $?
tail -4 "$R/pytest.log"
cat "$OUT/summary.txt"
