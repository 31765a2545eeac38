#!/bin/bash
# One device call (1 GPU, ~1 min): call_trace_events.sh again after the review of the timed nodes (the clocks placed by
# the later of two anchors - the start barrier's exit and the GEMM's last lane - in integer ns; trace_case.sh wants
# each expected node on every rank and none placed before its dependency). Carry build/tpgemm and build/trace/tpgemm.
#   bash bench/results/experiments/call_trace_events2.sh
exec bash "$(dirname "$0")/call_trace_events.sh" "$@"
