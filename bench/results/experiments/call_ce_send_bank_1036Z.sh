#!/bin/bash
# One device call (nvidia-h200, 1 GPU), after the send bank moved second (ce_partials.c: the one-hop walk raised
# the flags of the first bank, where the chains waited: call_ce_processes_1033Z.sh). As call_ce_partials_fixes_1029Z.sh:
# the _ce twins' reference checks, gpu_epochs (plain, captured, TP = 4, one process per rank twice), the
# missing-peer timeout.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/all.log
T=build/tpgemm
echo "=== refused without 32 queues" >> $L
$T --share-device --config rs_tila_bf16_ce_tp2 --m 2048 --n 2048 --k 1024 --iterations 1 --warmup-iterations 0 >> $L 2>&1
echo "| refused without CUDA_DEVICE_MAX_CONNECTIONS | rc=$? (5 expected) | $(grep -o 'need CUDA_DEVICE_MAX_CONNECTIONS=32' $L | head -1) |"
export CUDA_DEVICE_MAX_CONNECTIONS=32
run() { local name=$1; shift; echo "=== $name" >> $L
  timeout 150 $T --share-device "$@" --iterations 3 --warmup-iterations 1 >> $L 2>&1; echo "| $name | rc=$? |"; }
run ce_tila_tp2_l2 --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1
run ce_tilb_wide_tp4 --config rs_tilb_bf16_wide_ce_tp4 --m 4096 --n 8192 --k 8192
run ce_tila_wide_tp2_overlap --config rs_tila_bf16_wide_ce_tp2 --m 3072 --n 4096 --k 8192 --l 2 --overlap-barriers
run ce_tilb_tp8_overlap --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --overlap-barriers
run ce_tila_tp8 --config rs_tila_bf16_ce_tp8 --m 4096 --n 2048 --k 4096
run ce_tila_tp2_m128_ring_fewrows --config rs_tila_bf16_ce_tp2 --m 128 --n 8192 --k 8192 --rs-ring
for a in "2" "2 --capture" "4" "4 --capture" "2 --processes" "2 --processes"; do
  echo "=== gpu_epochs $a" >> $L; t0=$(date +%s)
  timeout 240 build/tests/gpu_epochs $a --share-device >> $L 2>&1; echo "| gpu_epochs $a | rc=$? | $(( $(date +%s) - t0 )) s |"
done
for o in "" "--overlap-barriers"; do
  echo "=== gpu_timeout $o" >> $L
  timeout 120 build/tests/gpu_timeout 300 --share-device --copy-engine-partials $o >> $L 2>&1
  echo "| gpu_timeout ce $o | rc=$? | $(grep -oE 'missing peer: .{0,40}after [0-9.]+ s' $L | tail -1) |"
done
grep -E "Disposition|failed|rror" $L | grep -v "Passed" | head -30
