#!/bin/bash
# One device call (1 GPU, ~1 min): the GPU pytest's queue-check case after the check moved to where the op's walk has
# chains (a one-hop walk of a copy-engine config ran refused with fewer than 32 queues; --rs-ring brings the refusal
# back). From the repository root:
#   bash bench/results/experiments/call_ce_queues.sh
OUT=${OUT:-build/ce_queues}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
export TPG_REQUIRE_GPUS=1
timeout 200 python3 -m pytest -q -rs tests/test_gpu.py -k "32_queues" > "$R/pytest.log" 2>&1; at "GPU pytest 32_queues" $?
tail -3 "$R/pytest.log"
cat "$OUT/summary.txt"
