#!/bin/bash
# One device call (nvidia-h200, 1 GPU): why the 64-row kernels run 16 rows slower than 64 (1533Z's run: 70B-o at
# M = 16 34 us a call, at M = 64 23 us, same tiles, same B; cuBLASLt 21-22 us at both). (1) the load floor of the
# same tile walks without math (tma_rate, 64x128 s8 new) at 16 and 64 rows; (2) the CLI's mean call time at
# M = 16 / 32 / 48 / 64 for the ping-pong 64x128, the cooperative one and its stream-K twin (x_ configs of
# decode_stream_k.patch); (3) trace-build timelines at 16 and 64 rows (per-tile mainloop / epilogue); (4) the
# row rule's one_hop group of tier 2 with every rank on the GPU at TP = 2 (new ragged 128x128 case); (5) PDL
# twins of the ping-pong and the stream-K kernel on three decode problems.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R/trace
echo "== (1) tma_rate"
timeout 100 build/bench/tma_rate --iterations 200 --rounds 5 --problem 16x8192x4096 --problem 64x8192x4096 \
  --problem 16x5120x8192 --problem 64x5120x8192 > $R/tma_rate.log 2>&1; echo "rc=$?"
grep -E "^[0-9]+ x|^64x128|^128x128 1x1 s5 |^128x256 1x1 s3 " $R/tma_rate.log
echo "== (2) CLI mean call time (us)"
for cfg in ag_rota_bf16_pp64_tp1 x_c64_tp1 x_c64_sk_tp1; do
  for m in 16 32 48 64; do for nk in "8192 4096" "5120 8192"; do set -- $nk
    t=$(timeout 60 build/tpgemm --config $cfg --tp 1 --devices 0 --m $m --n $1 --k $2 --iterations 300 2>&1 | tee -a $R/cli.log | grep -E '^Avg runtime')
    echo "$cfg m=$m n=$1 k=$2 $t"; done; done; done
echo "== (3) traces"
for spec in "pp16 ag_rota_bf16_pp64_tp1 16" "pp64 ag_rota_bf16_pp64_tp1 64" "sk16 x_c64_sk_tp1 16"; do set -- $spec
  timeout 60 build/trace/tpgemm --config $2 --tp 1 --devices 0 --m $3 --n 8192 --k 4096 --iterations 20 \
    --trace $R/trace/$1.json > $R/trace/$1.log 2>&1; echo "$1 rc=$?"
  python3 bench/timeline.py $R/trace/$1.json > $R/trace/$1.txt 2>&1; head -12 $R/trace/$1.txt; done
echo "== (4) tier 2 one_hop, shared, TP = 2"
OUT=$R/tier2 TIER2_GROUPS=one_hop timeout 120 tests/gpu/run_tier2.sh --tp 2 --share-device > $R/tier2.log 2>&1; echo "rc=$?"
tail -5 $R/tier2.log
echo "== (5) PDL twins"
OUT=$R/pdl timeout 200 bench/run_local_gemm.sh --dtype bf16 --pdl-ab --budget-s 170 --configs ag_rota_bf16_pp64_tp1,x_c64_sk_tp1 \
  --problems 16x8192x4096,16x3072x4096,64x8192x4096 > $R/pdl.log 2>&1; echo "rc=$?"
cd $OUT && tar czf records.tgz r && rm -rf r
