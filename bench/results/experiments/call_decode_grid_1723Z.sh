#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/decode_stream_k.patch applied: the decode grid
# (decode_grid.py: M 16-128 x N 2048-57344 x K 4096-28672, L2-cold operands, sleep-queued windows) of the ping-pong
# 64x128, the wide kernel, the cooperative 64x128 and its stream-K twin, and both schedules' default picks, against
# cuBLAS (torch.matmul) - the data for a stream-K pick rule, and the one-row clause's 70B-fc1 M = 16 pick re-timed.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
nvidia-smi -q -d CLOCK,POWER > $R/gpu_before.txt 2>&1
timeout 500 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_wide_tp1,x_c64_tp1,x_c64_sk_tp1 > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; tail -5 $R/decode_grid.log
nvidia-smi -q -d CLOCK,POWER > $R/gpu_after.txt 2>&1
cd $OUT && tar czf records.tgz r && rm -rf r
