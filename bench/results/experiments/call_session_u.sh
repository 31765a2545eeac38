#!/bin/bash
# One device call (1 GPU, <= ~6 min): what the 2026-12-07 (03:10Z-) and (05:20Z-) sessions left unrun on a GPU. The
# binding's whole-op calls (Op.run with torch streams and with the context's, set_scalars with C, set_pdl:
# tests/gpu/binding_calls.py, new), the C tests with a GPU present (test_op_refused's failed-build case now reports
# itself skipped there), and the GPU pytest's cases that the 0445Z call's bound cut (build/gpu_rest_ids.txt: ids 55-84
# of `pytest --collect-only -q tests/test_gpu.py` then) with the new binding case and the torch-capture case (the
# binding's refusal paths moved since). From the repository root:
#   bash bench/results/experiments/call_session_u.sh
OUT=${OUT:-build/session_u}
# shellcheck source=call_preamble.sh
source "$(dirname "$0")/call_preamble.sh"
export TPG_REQUIRE_GPUS=1
logged build build.log 240 ninja build/tpgemm build/libtpgemm.so tests
logged "binding_calls.py" binding_calls.log 120 env CUDA_DEVICE_MAX_CONNECTIONS=32 python3 tests/gpu/binding_calls.py
tail -3 "$R/binding_calls.log"
c_tests
grep -h "skipped" "$R/test_op_refused.log" | head -3
mapfile -t ids < <(grep -v '^#' bench/results/experiments/gpu_rest_ids.txt)
logged "GPU pytest (rest)" gpu_pytest_rest.log "${PYTEST_S:-300}" python3 -m pytest -q -rs "${ids[@]}" \
    "tests/test_gpu.py::test_binding_runs_whole_ops_with_scalars_and_pdl_on_a_shared_device" \
    "tests/test_gpu.py::test_ops_inside_torch_cuda_graphs_on_a_shared_device"
grep -E "passed|failed|FAILED|Error" "$R/gpu_pytest_rest.log" | tail -8
cat "$OUT/summary.txt"
