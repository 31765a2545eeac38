#!/bin/bash
# One device call (1 GPU, ~2 min): call_gave_up.sh again after a review - a wait is marked given up by its own result,
# not by its thread's earlier give-up (a late peer's waits that saw their flags had been marked); the CLI keeps the
# timeout's status when the trace cannot be written. From the repository root:
#   bash bench/results/experiments/call_gave_up3.sh
exec bash "$(dirname "$0")/call_gave_up.sh" "$@"
