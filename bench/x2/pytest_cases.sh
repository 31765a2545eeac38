# Sourced by bench/x2/call1_acceptance.sh (and read by tests/test_x2_pytest_cases.py, which collects them on the CPU):
# the GPU pytest's selections for the 2-GPU machine, pytest -k expressions over test names and parameter ids. Each is
# one line: pytest's -k parser takes spaces and tabs between words, not a newline (a wrapped one failed at once).
# ACROSS: every case that runs across GPUs (not the shared-device ones, which the one-GPU sessions run).
ACROSS="not shared_device and not shared-device"
# TIMEOUT_CASES: issue 4's missing-peer timeout and the calls after a late peer, run first in call 1
TIMEOUT_CASES="missing_peer_times_out_then_fresh_context_works or (missing_peer_costs_one_timeout and not shared)"
TIMEOUT_CASES+=" or call_after_a_late_one"
# NCCL_CASES: the NCCL transport across GPUs (NVLink's 4-8 channels a peer, captured, P2P disabled), first in call 3
NCCL_CASES="nccl_transport"
