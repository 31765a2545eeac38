#!/bin/bash
# One device call (nvidia-h200, 1 GPU): the copy-engine chains on tile-row counts (one mem-op wait a tile row, pinned
# zeros copied over the counts once a call) instead of one wait and one reset a tile flag. Every rank on GPU 0, 32
# queues for the _ce runs. (1) the _ce twins' reference checks at TP = 2 / 4 / 8 (batches, alpha / beta, ragged N, the
# barriers beside the GEMM, few rows), gpu_epochs (plain, captured, TP = 4, one process per rank), the missing-peer
# timeout; (2) the shared-GPU time of 70B-o, 8B-o and 70B-fc2 (wide) push / _ce twin, with the _ce twin also from the
# build before (build/head/tpgemm, b1cb79c): not TP numbers - both ranks on one GPU, the copies kernels on the free
# SMs - but what the mem-op nodes cost shows; (3) kernel_selftest --no-perf (every instance's cases and rings: the
# flush now counts rows where asked) and --rs-far for pp128tdq ("ce graph" on the kernel's row counts).
# Carry build/tpgemm, build/head/tpgemm, build/tests/gpu_{epochs,timeout,multiprocess}, build/selftest/kernel_selftest.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
summary() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('check'), 'max_error', r.get('max_error'), 'avg_ms', r.get('avg_ms'))" "$1" 2>/dev/null || echo "no json"; }
run() { local name=$1 t=$2; shift 2
  timeout 150 $t --share-device "$@" --json > $OUT/$name.json 2> $OUT/$name.err; local rc=$?
  echo "| $name | rc=$rc | $(summary $OUT/$name.json) |"; [ $rc = 0 ] || tail -3 $OUT/$name.err; }
T=build/tpgemm
Q=(--iterations 3 --warmup-iterations 1)
export CUDA_DEVICE_MAX_CONNECTIONS=32
run ce_tila_tp2_l2 $T --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1 "${Q[@]}"
run ce_tilb_wide_tp4 $T --config rs_tilb_bf16_wide_ce_tp4 --m 4096 --n 8192 --k 8192 "${Q[@]}"
run ce_tila_wide_tp2_overlap $T --config rs_tila_bf16_wide_ce_tp2 --m 3072 --n 4096 --k 8192 --l 2 --overlap-barriers "${Q[@]}"
run ce_tilb_tp8_overlap $T --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --overlap-barriers "${Q[@]}"
run ce_tila_tp2_m256 $T --config rs_tila_bf16_ce_tp2 --m 256 --n 8192 --k 8192 "${Q[@]}"
run ce_tila_tp2_m128_ring $T --config rs_tila_bf16_ce_tp2 --m 128 --n 8192 --k 8192 --rs-ring "${Q[@]}"
for a in "2" "2 --capture" "4" "2 --processes"; do
  timeout 240 build/tests/gpu_epochs $a --share-device > $OUT/epochs_${a// /_}.log 2>&1
  echo "| gpu_epochs $a | rc=$? | $(tail -1 $OUT/epochs_${a// /_}.log) |"
done
for o in "" "--overlap-barriers"; do
  timeout 120 build/tests/gpu_timeout 300 --share-device --copy-engine-partials $o > $OUT/timeout_ce${o:+_overlap}.log 2>&1
  echo "| gpu_timeout ce $o | rc=$? | $(grep -E 'missing peer|late peer' $OUT/timeout_ce${o:+_overlap}.log | cut -c1-150 | tr '\n' ' ') |"
done
P=(--iterations 30 --warmup-iterations 5 --no-check)
for shape in "70B-o 16384 8192 8192 rs_tila_bf16" "8B-o 8192 4096 4096 rs_tila_bf16" "70B-fc2 16384 8192 28672 rs_tila_bf16_wide"; do
  set -- $shape
  for i in 1 2; do
    run ${1}_push_$i $T --config ${5}_tp2 --m $2 --n $3 --k $4 "${P[@]}"
    run ${1}_ce_$i $T --config ${5}_ce_tp2 --m $2 --n $3 --k $4 "${P[@]}"
    run ${1}_ce_before_$i build/head/tpgemm --config ${5}_ce_tp2 --m $2 --n $3 --k $4 "${P[@]}"
  done
done
unset CUDA_DEVICE_MAX_CONNECTIONS
timeout 200 build/selftest/kernel_selftest --no-perf > $OUT/selftest_noperf.log 2>&1; echo "| kernel_selftest --no-perf | rc=$? |"
grep -E "^\[FAIL\]|ALL PASSED|failure" $OUT/selftest_noperf.log | tail -3
timeout 150 build/selftest/kernel_selftest --no-cases --rs-far --only pp128tdq > $OUT/rs_far.log 2>&1; echo "| rs-far pp128tdq | rc=$? |"
grep -A8 "pushes over the host link" $OUT/rs_far.log | tail -5
