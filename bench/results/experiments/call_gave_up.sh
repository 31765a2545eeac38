#!/bin/bash
# One device call (1 GPU, ~4 min): a timed-out call traced - the trace build's gpu_timeout with --trace, both ranks on
# the one GPU, the GEMM beside the start barrier (tests/test_gpu.py's new case, both comms, then the same run's
# timeline summary printed), the GPU pytest's other shared-device missing-peer case, and tier 2's trace group at
# TP = 2 (the trace kernels changed: their waits record TPG_TRACE_F_GAVE_UP). From the repository root:
#   bash bench/results/experiments/call_gave_up.sh
OUT=${OUT:-build/gave_up}  # call_gave_up2.sh passes its own
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
timeout 300 ninja build/tpgemm build/trace/tpgemm build/tests/gpu_timeout build/trace/tests/gpu_timeout \
    > "$R/ninja.log" 2>&1; at "ninja" $?
timeout 200 python3 -m pytest -q -rs tests/test_gpu.py -k "timed_out_call or missing_peer_times_out_on_a_shared" \
    > "$R/pytest.log" 2>&1; at "pytest (timed-out call traced; missing peer, shared)" $?
tail -4 "$R/pytest.log"
# call_gave_up2.sh: the build and the pytest step alone
[ -n "${GAVE_UP_PYTEST_ONLY:-}" ] && { cat "$OUT/summary.txt"; exit 0; }
for sched in --allgather ""; do
    name=gave_up${sched:+_ag}
    CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 60 build/trace/tests/gpu_timeout 200 --share-device --overlap-barriers \
        $sched --trace "$R/$name.json" > "$R/$name.log" 2>&1; at "gpu_timeout --trace $sched" $?
    grep -E "missing peer|trace of rank 0" "$R/$name.log" | cut -c1-200
    python3 bench/timeline.py "$R/$name.json" > "$R/$name.summary" 2>&1; at "timeline $name" $?
    grep -E "rank|gave up|barrier|waits" "$R/$name.summary" | cut -c1-160
    rm -f "$R/$name.json"
done
OUT=$R/tier2_trace TIER2_GROUPS=trace TIER2_BUDGET_S=80 timeout 130 tests/gpu/run_tier2.sh --tp 2 --share-device \
    --quick > "$R/tier2_trace.log" 2>&1; at "tier 2 quick, shared TP = 2, group trace" $?
grep -E "^(PASS|FAIL)" "$R/tier2_trace.log" | cut -c1-150
cat "$OUT/summary.txt"
