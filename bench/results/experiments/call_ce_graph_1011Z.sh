#!/bin/bash
# Prepared 2026-12-04 07:40Z, run 2026-12-04 1011Z: one device call (nvidia-h200,
# 1 GPU) for the copy-engine push's graph form (docs/PERF_NOTES.md "Next", first bullet) - --rs-far's "ce graph":
# each call one graph of the epoch's bump, the GEMM and, on its own branch, per band a mem-op wait on the band's
# counter (pp128tdc: TPG_DIAG_BAND_COUNTS), a write of 0 and the band's copy into host memory. Does the graph run
# the wait branch beside the GEMM every call (a hang otherwise: the window's watchdog ends the run), and at what cost
# against "far ce" / "ce chain" / the ring? pp128tdc with pp128tdq beside it (its "ce graph" columns print "-").
# Build here (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest. Name the call by its start time.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 400 $K --no-perf --no-cases --rs-far --only pp128tdq,pp128tdc > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A8 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A80 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|ce chain|ce graph) \| [01]"
grep -E "FAIL|status=[1-9]|watchdog|failed" $OUT/rs_far.log | head -3; tail -1 $OUT/rs_far.log
