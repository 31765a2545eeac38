#!/bin/bash
# One device call (nvidia-h200, 1 GPU): `kernel_selftest --pulls` on every self-test instance - the gathered walk's
# shards pulled by the kernel against the plain GEMM of the same shards, twice, then with half the SMs held by a
# blocker kernel (the GEMM must end before the blocker lets them go); wide3fx, fixed slices, is the control and must
# time out there (tests/gpu/selftest_pulls.cu). Then one gathered call through the CLI, every rank on the GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout 300 build/selftest/kernel_selftest --no-perf --no-cases --pulls > $OUT/pulls.log 2>&1
echo "rc=$?" >> $OUT/pulls.log
timeout 60 build/tpgemm --share-device --schedule AllGather1D_TilingCD_RotatingA --tp 8 --m 128 --n 6144 --k 4096 \
  > $OUT/cli_tp8.log 2>&1; echo "rc=$?" >> $OUT/cli_tp8.log
grep -E "FAIL|control|ALL PASSED|failure" $OUT/pulls.log | head -20; grep -c "^\[PASS\]" $OUT/pulls.log
grep -E "Disposition|Copies|rc=" $OUT/cli_tp8.log
