#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with the x_sk_gpu kernel (experiments/sk_scope.patch: the stream-K 64x128
# with its flags released and acquired at GPU scope, TPG_SK_GPU_SCOPE=1, instead of system scope): (1) the decode grid
# at M = 16 / 64, N 2048-10240, K 4096-16384: the shipped stream-K 64x128 against that twin and the ping-pong 64x128
# (where the stream-K's fixed cost shows: 16 tiles of 64 k-blocks ran 20.4 us against the ping-pong's 17.3); (2) the
# trace build's timeline of the shipped stream-K and its twin at 16 x 2048 x 4096 and 16 x 5120 x 8192: where a
# fragment's time goes.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
timeout 200 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_gpu_tp1 16,64:2048,4096,6144,8192,10240:4096,8192,16384 \
  > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; grep -c "CHECK FAILED" $R/decode_grid.log
tr() { local name=$1; shift
  timeout 60 build/trace/tpgemm --tp 1 --devices 0 "$@" --iterations 20 --trace $R/$name.json > $R/$name.log 2>&1
  echo "$name rc=$? $(grep -E '^Avg runtime' $R/$name.log)"
  python3 bench/timeline.py $R/$name.json > $R/$name.txt 2>&1; }
tr sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
tr gpu_2048 --config x_sk_gpu_tp1 --m 16 --n 2048 --k 4096
tr pp_2048 --config ag_rota_bf16_pp64_tp1 --m 16 --n 2048 --k 4096
tr sk_5120 --config ag_rota_bf16_sk64_tp1 --m 16 --n 5120 --k 8192
tr gpu_5120 --config x_sk_gpu_tp1 --m 16 --n 5120 --k 8192
head -30 $R/sk_2048.txt
cd $OUT && tar czf records.tgz r && rm -rf r
