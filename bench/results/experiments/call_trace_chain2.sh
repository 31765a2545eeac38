#!/bin/bash
# One device call (1 GPU, ~2 min): call_trace_chain.sh again (TP = 2, 4, 4, 8) after the two anchors' events joined
# the items' chain (the origin first, the GEMM's end before the first node after the GEMM): a traced graph has one
# branch more than an untraced one. At 1640Z (items chained, anchors as leaves) TP = 8's copies in pieces and its
# copy-engine ring timed out at the barrier. Carry build/tpgemm and build/trace/tpgemm. From the repository root:
#   bash bench/results/experiments/call_trace_chain2.sh
exec bash "$(dirname "$0")/call_trace_chain.sh" "$@"
