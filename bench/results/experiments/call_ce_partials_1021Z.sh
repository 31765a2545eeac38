#!/bin/bash
# One device call (nvidia-h200, 1 GPU): copy-engine partials (schedules.yaml copy_engine_partials, runtime/src/
# ce_partials.c) with every rank on GPU 0 - the reference check of the four _ce twins at TP = 2 / 4 / 8 (batches,
# alpha / beta, ragged N, the barriers beside the GEMM), few tokens (interleaved ring, one-hop walk, one-hop kept a
# ring), gpu_epochs (new operands every call across mode changes; captured; one process per rank), the missing-peer
# timeout, and a shared-GPU timing of 70B-o against the push twin (not a TP number: both ranks on one GPU).
# Carry build/tpgemm, build/tests/gpu_epochs, build/tests/gpu_timeout, build/tests/gpu_multiprocess.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
T=build/tpgemm
summary() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('check'), 'max_error', r.get('max_error'), 'det', r.get('deterministic'), 'avg_ms', r.get('avg_ms'), 'tflops', r.get('tflops'))" "$1" 2>/dev/null || echo "no json"; }
run() { local name=$1; shift
  timeout 150 $T --share-device "$@" --json > $OUT/$name.json 2> $OUT/$name.err; local rc=$?
  echo "| $name | rc=$rc | $(summary $OUT/$name.json) |"; [ $rc = 0 ] || tail -3 $OUT/$name.err; }
Q=(--iterations 3 --warmup-iterations 1)
run ce_tila_tp2_l2 --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1 "${Q[@]}"
run ce_tilb_wide_tp4 --config rs_tilb_bf16_wide_ce_tp4 --m 4096 --n 8192 --k 8192 "${Q[@]}"
run ce_tila_wide_tp2_overlap --config rs_tila_bf16_wide_ce_tp2 --m 3072 --n 4096 --k 8192 --l 2 --overlap-barriers "${Q[@]}"
run ce_tilb_tp8_overlap --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --overlap-barriers "${Q[@]}"
run ce_tila_tp2_m256 --config rs_tila_bf16_ce_tp2 --m 256 --n 8192 --k 8192 "${Q[@]}"
run ce_tila_tp2_m128 --config rs_tila_bf16_ce_tp2 --m 128 --n 8192 --k 8192 "${Q[@]}"
run ce_tila_tp2_m128_ring --config rs_tila_bf16_ce_tp2 --m 128 --n 8192 --k 8192 --rs-ring "${Q[@]}"
for a in "2" "2 --capture" "4" "2 --processes"; do
  timeout 240 build/tests/gpu_epochs $a --share-device > $OUT/epochs_${a// /_}.log 2>&1
  echo "| gpu_epochs $a | rc=$? | $(tail -1 $OUT/epochs_${a// /_}.log) |"
done
for o in "" "--overlap-barriers"; do
  timeout 120 build/tests/gpu_timeout 300 --share-device --copy-engine-partials $o > $OUT/timeout_ce${o:+_overlap}.log 2>&1
  echo "| gpu_timeout ce $o | rc=$? | $(grep -E 'missing peer|late peer' $OUT/timeout_ce${o:+_overlap}.log | cut -c1-150 | tr '\n' ' ') |"
done
P=(--m 16384 --n 8192 --k 8192 --iterations 30 --warmup-iterations 5 --no-check)
for i in 1 2; do
  run push_70b_o_$i --config rs_tila_bf16_tp2 "${P[@]}"
  run ce_70b_o_$i --config rs_tila_bf16_ce_tp2 "${P[@]}"
done
