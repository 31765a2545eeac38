#!/bin/bash
# One device call (1 GPU, ~1 min): call_gave_up.sh's build and pytest step again after its test read the summary by
# pid, not by rank (KeyError at 1702Z; the traces themselves were right). From the repository root:
#   bash bench/results/experiments/call_gave_up2.sh
OUT=${OUT:-build/gave_up2} GAVE_UP_PYTEST_ONLY=1 exec bash "$(dirname "$0")/call_gave_up.sh" "$@"
