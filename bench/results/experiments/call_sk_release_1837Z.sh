#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_release.patch (not kept, reverted after this call):
# the stream-K 64x128 raising a contribution's flag 4 k-blocks into its next mainloop, and x_sk_eager, the control
# that raises it right after its stores (TPG_SK_EAGER_RELEASE=1, the shipped behaviour; the 1806Z traces: a
# contribution's store + release ~1.9 us, the warpgroup idle). (1) tier 2's stream_k group at TP = 2 and 4, every rank on the GPU; (2) the decode grid at M = 16 /
# 32 / 64: ping-pong 64x128, stream-K, its eager control; (3) traces of both at 16 x 2048 x 4096.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
for tp in 2 4; do
  OUT=$R/t$tp TIER2_GROUPS=stream_k timeout 60 tests/gpu/run_tier2.sh --tp $tp --share-device > $R/tier2_tp$tp.log 2>&1
  echo "tier2 tp$tp rc=$?"; tail -2 $R/tier2_tp$tp.log | head -1
done
timeout 200 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_eager_tp1 16,32,64:2048,4096,6144,8192,10240:4096,8192,16384 \
  > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; grep -c "CHECK FAILED" $R/decode_grid.log
tr() { local name=$1; shift
  timeout 60 build/trace/tpgemm --tp 1 --devices 0 "$@" --iterations 20 --trace $R/$name.json > $R/$name.log 2>&1
  echo "$name rc=$? $(grep -E '^Avg runtime' $R/$name.log)"
  python3 bench/timeline.py $R/$name.json > $R/$name.txt 2>&1; }
tr sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
tr eager_2048 --config x_sk_eager_tp1 --m 16 --n 2048 --k 4096
cd $OUT && tar czf records.tgz r && rm -rf r
