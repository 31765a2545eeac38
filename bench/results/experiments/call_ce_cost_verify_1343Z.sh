#!/bin/bash
# One device call (nvidia-h200, 1 GPU): (1) ce_chain_cost.cu - what a copy-engine chain's band costs besides its
# bytes (graph nodes in a row: mem-op wait, data copy, flags copy, mem-op reset; copies device -> pinned host and
# device -> device); (2) b1cb79c checked on a GPU (the band count made private to ce_partials.c): the _ce twins' CLI
# checks at TP = 2 / 4, gpu_epochs at TP = 2 (plain, captured) with every rank on GPU 0 and 32 queues; (3) the
# whole kernel self-test's default run (every instance's cases and its perf table), not run since 2026-12-02.
# Carry build/{tpgemm,libtpgemm.so}, build/tests/gpu_{epochs,timeout}, build/selftest/kernel_selftest,
# build/exp/ce_chain_cost.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/all.log
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 120 build/exp/ce_chain_cost > $OUT/ce_chain_cost.md 2>&1; echo "| ce_chain_cost | rc=$? |"
export CUDA_DEVICE_MAX_CONNECTIONS=32
run() { local name=$1; shift; echo "=== $name" >> $L
  timeout 150 build/tpgemm --share-device "$@" --iterations 3 --warmup-iterations 1 >> $L 2>&1; echo "| $name | rc=$? |"; }
run ce_tila_tp2_l2 --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1
run ce_wide_tp4 --config rs_tilb_bf16_wide_ce_tp4 --m 4096 --n 2048 --k 8192 --beta 1
for a in "2" "2 --capture"; do
  echo "=== gpu_epochs $a" >> $L; timeout 200 build/tests/gpu_epochs $a --share-device >> $L 2>&1
  echo "| gpu_epochs $a | rc=$? | $(grep -E '^(rank [01]: )?[0-9]+ passed' $L | tail -1) |"
done
unset CUDA_DEVICE_MAX_CONNECTIONS
timeout 300 build/selftest/kernel_selftest > $OUT/kernel_selftest.log 2>&1; echo "| kernel_selftest | rc=$? |"
grep -cE "^\[PASS\]" $OUT/kernel_selftest.log | sed 's/^/pass lines: /'; grep -E "^\[FAIL\]|FAILED|ALL PASSED" $OUT/kernel_selftest.log | tail -5
cat $OUT/ce_chain_cost.md
