#!/bin/bash
# One device call (nvidia-h200, 1 GPU): where the far ring's time goes - pp128tdq / pp128spq (pp128tdf / pp128sp with
# TPG_DIAG_PHASES: per-stage sums of the turn wait, mainloop, epilogue, its start, buffer waits and the producer's
# slot waits) on --rs-far at K 32k / 64k, and on the plain ring proxy at 70B-o. Build here
# (tests/gpu/kernel_selftest.sh), carry build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 100 $K --no-perf --only pp128tdq,pp128spq > $OUT/cases.log 2>&1; echo "cases rc=$?"; tail -1 $OUT/cases.log
timeout 200 $K --no-perf --no-cases --rs-far --problem far-k32k,far-k64k --only pp128tdq,pp128spq \
  > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A30 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far"
grep -A8 "^## pushes over" $OUT/rs_far.log | grep "^| far"
timeout 100 $K --no-perf --no-cases --rs-perf --problem 70B-o --only pp128tdq,pp128spq > $OUT/rs_perf.log 2>&1
echo "rs-perf rc=$?"; grep -A12 "^## where a ping-pong" $OUT/rs_perf.log | grep "^| 70B"
grep -E "FAIL|status=[1-9]" $OUT/rs_*.log | head -4
