#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_rows.patch (x_sk_allrows: the stream-K 64x128 as
# shipped at 17:40Z, every row of a split tile's sums moved, TPG_SK_ALL_ROWS=1): the shipped kernel now moves only the
# rows of a split tile that exist (at M = 16 one warp's of four). (1) tier 2's stream_k group (now also 40 rows in
# two batches) at TP = 2 and 4, every rank on the GPU; (2) the decode grid at M = 16 / 32 / 64, N 2048-10240, K
# 4096-16384: ping-pong 64x128, the stream-K with its rows only, the all-rows control; (3) the trace build's
# timeline of the new stream-K at 16 x 2048 x 4096 and 16 x 5120 x 8192 (the 1754Z call's fix-up: 6-6.7 us a finisher).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
for tp in 2 4; do
  OUT=$R/t$tp TIER2_GROUPS=stream_k timeout 60 tests/gpu/run_tier2.sh --tp $tp --share-device > $R/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?"; tail -3 $R/tier2_tp$tp.log
done
timeout 200 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_allrows_tp1 16,32,64:2048,4096,6144,8192,10240:4096,8192,16384 \
  > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; grep -c "CHECK FAILED" $R/decode_grid.log
tr() { local name=$1; shift
  timeout 60 build/trace/tpgemm --tp 1 --devices 0 "$@" --iterations 20 --trace $R/$name.json > $R/$name.log 2>&1
  echo "$name rc=$? $(grep -E '^Avg runtime' $R/$name.log)"
  python3 bench/timeline.py $R/$name.json > $R/$name.txt 2>&1; }
tr sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
tr all_2048 --config x_sk_allrows_tp1 --m 16 --n 2048 --k 4096
tr sk_5120 --config ag_rota_bf16_sk64_tp1 --m 16 --n 5120 --k 8192
tr all_5120 --config x_sk_allrows_tp1 --m 16 --n 5120 --k 8192
cd $OUT && tar czf records.tgz r && rm -rf r
