#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the shipped configs after A's box was trimmed to the launch's rows, built with
# experiments/decode_stream_k_fused.patch (x_ configs at TP = 2 / 4 only: the local GEMM runs none of them).
# (1) the stream-K walk in the gathered and one-hop walks' one GEMM (x_ag_sk / x_rs_sk, cooperative 64x128), every
# rank on the GPU: checks, and mean call times beside the default pick's (share mode: the ranks split the SMs, an A/B
# only); (2) no change at scale: the wide kernel on 8192^3 against cuBLASLt (A's box is a whole tile there; the
# producer's per-tile byte count is the only new instruction); (3) the decode problems the 1559Z call did not time
# since the trim (70B-fc1 and 8B-o at M = 16, 70B-o at M = 64), every shipped TP = 1 bf16 config against cuBLASLt.
# (Cut down after a refused start cost 90 s of the session's device time.)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=$OUT/r; mkdir -p $R
one() { local name=$1; shift
  timeout 20 build/tpgemm --share-device --timeout-ms 5000 --iterations 100 "$@" > $R/sk_$name.log 2>&1
  echo "$name rc=$? $(grep -E '^Disposition|^Avg runtime' $R/sk_$name.log | tr '\n' ' ' | cut -c1-150)"; }
G=(--m 32 --n 10240 --k 8192); H=(--m 32 --n 8192 --k 8192); E=(--m 32 --n 1000 --k 2048 --alpha 0.5 --beta 1)
one ag_sk --config x_ag_sk_tp2 "${G[@]}"; one ag_default --schedule AllGather1D_TilingCD_RotatingA --tp 2 "${G[@]}"
one ag_sk_ragged --config x_ag_sk_tp2 "${E[@]}"; one ag_sk_ce --config x_ag_sk_tp2 --gather-copy-engine "${G[@]}"
one ag_sk_overlap --config x_ag_sk_tp2 --overlap-barriers "${G[@]}"
one rs_sk --config x_rs_sk_tp2 "${H[@]}"; one rs_default --schedule ReduceScatter1D_TilingA_RotatingC --tp 2 "${H[@]}"
one rs_sk_ragged --config x_rs_sk_tp2 "${E[@]}"; one rs_sk_ring --config x_rs_sk_tp2 --rs-ring "${H[@]}"
one rs_sk_overlap --config x_rs_sk_tp2 --overlap-barriers "${H[@]}"
one ag_sk_tp4 --config x_ag_sk_tp4 --m 64 --n 10240 --k 8192; one rs_sk_tp4 --config x_rs_sk_tp4 --m 64 --n 8192 --k 8192
OUT=$R/decode timeout 140 bench/run_local_gemm.sh --dtype bf16 --budget-s 110 --problems 70B-fc1-m16,8B-o-m16,70B-o-m64 > $R/decode.log 2>&1
echo "decode rc=$?"; grep -E "^\[" $R/decode/local_gemm.log; tail -6 $R/decode/local_gemm.log | head -5
OUT=$R/scale timeout 45 bench/run_local_gemm.sh --dtype bf16 --budget-s 30 --problems gemm-8192 \
  --configs ag_rota_bf16_wide_tp1 > $R/scale.log 2>&1
echo "scale rc=$?"; grep -E "^\[" $R/scale/local_gemm.log
cd $OUT && tar czf records.tgz r && rm -rf r
