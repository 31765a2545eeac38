#!/bin/bash
# One device call (nvidia-h200, 1 GPU; first tried 13:39Z, refused): issue 3 after the gathered walk's pull prologue
# went into every kernel, and what the prologue costs. Built with bench/results/experiments/no_pulls_schedules.patch
# applied: x_wide_np / x_pp_np are the shipped bf16 local kernels (wide ba03f0ee, ping-pong c99dc75b) compiled with
# TPG_DIAG_NO_PULLS=1 (9e03d923, f1df726b). The bf16 local GEMM benchmark on every problem, shipped configs and x_
# twins interleaved on the same tensors, with the --aa control (cuBLASLt a second time, last in the order: the
# method's order bias); then the SASS of the four kernels (cuobjdump). Records tarred into $OUT/records.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
OUT=$OUT/r timeout 540 bench/run_local_gemm.sh --dtype ${LG_DTYPE:-bf16} --aa --budget-s ${LG_BUDGET_S:-500} \
  > $OUT/r/run_local_gemm.log 2>&1
echo "run_local_gemm rc=$?"
export PATH="$PATH:/usr/local/cuda/bin"
for h in 128x256x64_s3_w2_c1x1_ba03f0ee 128x256x64_s3_w2_c1x1_9e03d923 128x128x64_s5_w2pp_c1x1_c99dc75b \
         128x128x64_s5_w2pp_c1x1_f1df726b; do
  timeout 10 cuobjdump -sass build/generated/kernels/gemm_sm90_bf16_$h.o > $OUT/r/sass_$h.txt 2>&1
done
tail -34 $OUT/r/run_local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
