#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/sk_waits.patch (x_sk_serial: the stream-K 64x128 whose
# finisher's consumer thread 0 waits for every contributor's flag in turn, TPG_SK_SERIAL_WAITS=1, as before): the
# shipped kernel now waits for them on as many threads at once. The 1803Z traces: a finisher's fix-up ~6 us at 16 x 2048
# x 4096 whether it moved 32 or 8 KB a contributor - latency, not bytes. (1) tier 2's stream_k group at TP = 2, every
# rank on the GPU; (2) the decode grid at M = 16 / 32: ping-pong 64x128, stream-K, its serial-wait control; (3) traces.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
OUT=$R/t2 TIER2_GROUPS=stream_k timeout 60 tests/gpu/run_tier2.sh --tp 2 --share-device > $R/tier2_tp2.log 2>&1
echo "tier2 tp2 rc=$?"; tail -3 $R/tier2_tp2.log
timeout 200 python3 bench/results/experiments/decode_grid.py $R/decode_grid.json \
  ag_rota_bf16_pp64_tp1,ag_rota_bf16_sk64_tp1,x_sk_serial_tp1 16,32:2048,4096,6144,8192,10240:4096,8192,16384 \
  > $R/decode_grid.log 2>&1
echo "decode_grid rc=$?"; grep -c "CHECK FAILED" $R/decode_grid.log
tr() { local name=$1; shift
  timeout 60 build/trace/tpgemm --tp 1 --devices 0 "$@" --iterations 20 --trace $R/$name.json > $R/$name.log 2>&1
  echo "$name rc=$? $(grep -E '^Avg runtime' $R/$name.log)"
  python3 bench/timeline.py $R/$name.json > $R/$name.txt 2>&1; }
tr sk_2048 --config ag_rota_bf16_sk64_tp1 --m 16 --n 2048 --k 4096
tr serial_2048 --config x_sk_serial_tp1 --m 16 --n 2048 --k 4096
cd $OUT && tar czf records.tgz r && rm -rf r
