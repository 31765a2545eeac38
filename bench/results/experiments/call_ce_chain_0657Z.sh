#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the copy-engine push as a chain - --rs-far's new "ce chain" variant
# (tests/gpu/selftest_ce_chain.cu: per band of tiles a stream wait on the band's flags, a copy-engine copy into host
# memory, flag writes the receiving stage waits on) beside "far ce" (0652Z: the copy alone cost the GEMM nothing),
# for pp128tdq and pp128tma at K 16k / 32k / 64k. Build here (tests/gpu/kernel_selftest.sh), carry
# build/selftest/kernel_selftest.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
K=build/selftest/kernel_selftest
timeout 300 $K --no-perf --no-cases --rs-far --only pp128tma,pp128tdq > $OUT/rs_far.log 2>&1; echo "rs-far rc=$?"
grep -A8 "^## pushes over" $OUT/rs_far.log | grep "^| far"
grep -A80 "^## where a ping-pong" $OUT/rs_far.log | grep "^| far" | grep -E "\| (ring|far|ce chain) \| [01]"
grep -E "FAIL|status=[1-9]" $OUT/rs_far.log | head -3; tail -1 $OUT/rs_far.log
