#!/bin/bash
# One device call (nvidia-h200, 1 GPU) after a review of 0a249ad: the zeros over the row counts now branch off after
# the last wait (beside the last band's copies, not ahead of the closing barrier), tpg_op_sync checks the counts are
# back at 0, and the self-test's "ce graph" counts into a buffer of its own. Every rank on GPU 0, 32 queues for the
# _ce runs: the _ce checks at TP = 2 / 4 / 8, gpu_epochs (plain, captured, TP = 4, processes), both timeouts, the
# shared-GPU time of 70B-o and 8B-o push / _ce (not TP numbers), tier 2's variants group for the twins at TP = 2 / 4,
# and --rs-far "ce graph" for pp128tdq. One log ($OUT/all.log); the table last.
# Carry build/tpgemm, build/tests/gpu_{epochs,timeout,multiprocess}, build/selftest/kernel_selftest.
export PATH="$PATH:/usr/local/cuda/bin"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
L=$OUT/all.log R=$OUT/table.md
row() { echo "$*" >> $R; }
ms() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('check'), r.get('avg_ms'))" "$1" 2>/dev/null; }
run() { local name=$1; shift; echo "=== $name" >> $L
  CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 150 build/tpgemm --share-device "$@" --json > /tmp/r.json 2>> $L
  local rc=$?; cat /tmp/r.json >> $L; row "| $name | rc=$rc | $(ms /tmp/r.json) |"; }
Q=(--iterations 3 --warmup-iterations 1)
run ce_tila_tp2_l2 --config rs_tila_bf16_ce_tp2 --m 2048 --n 2776 --k 4096 --l 2 --alpha 0.5 --beta 1 "${Q[@]}"
run ce_tilb_wide_tp4 --config rs_tilb_bf16_wide_ce_tp4 --m 4096 --n 8192 --k 8192 "${Q[@]}"
run ce_tila_wide_tp2_overlap --config rs_tila_bf16_wide_ce_tp2 --m 3072 --n 4096 --k 8192 --l 2 --overlap-barriers "${Q[@]}"
run ce_tilb_tp8_overlap --config rs_tilb_bf16_ce_tp8 --m 4096 --n 2048 --k 4096 --beta 1 --overlap-barriers "${Q[@]}"
run ce_tila_tp2_m128_ring --config rs_tila_bf16_ce_tp2 --m 128 --n 8192 --k 8192 --rs-ring "${Q[@]}"
for a in "2" "2 --capture" "4" "2 --processes"; do
  echo "=== gpu_epochs $a" >> $L
  CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 240 build/tests/gpu_epochs $a --share-device > /tmp/e.log 2>&1
  row "| gpu_epochs $a | rc=$? | $(tail -1 /tmp/e.log) |"; cat /tmp/e.log >> $L
done
for o in "" "--overlap-barriers"; do
  echo "=== gpu_timeout $o" >> $L
  timeout 120 build/tests/gpu_timeout 300 --share-device --copy-engine-partials $o > /tmp/t.log 2>&1
  row "| gpu_timeout ce $o | rc=$? | $(grep -E 'missing peer' /tmp/t.log | grep -o 'after [0-9.]* s' | head -1) |"
  cat /tmp/t.log >> $L
done
P=(--iterations 30 --warmup-iterations 5 --no-check)
for i in 1 2; do
  run 70B-o_push_$i --config rs_tila_bf16_tp2 --m 16384 --n 8192 --k 8192 "${P[@]}"
  run 70B-o_ce_$i --config rs_tila_bf16_ce_tp2 --m 16384 --n 8192 --k 8192 "${P[@]}"
  run 8B-o_push_$i --config rs_tila_bf16_tp2 --m 8192 --n 4096 --k 4096 "${P[@]}"
  run 8B-o_ce_$i --config rs_tila_bf16_ce_tp2 --m 8192 --n 4096 --k 4096 "${P[@]}"
done
cat > /tmp/tpg_ce.sh <<'SH'
#!/bin/bash
if [ "$*" = "--list" ]; then "$PWD/build/tpgemm" --list | awk 'NR == 1 || /_ce_tp/'; else exec "$PWD/build/tpgemm" "$@"; fi
SH
chmod +x /tmp/tpg_ce.sh
for tp in 2 4; do
  OUT=/tmp/t2_$tp TPGEMM=/tmp/tpg_ce.sh TIER2_GROUPS=variants TIER2_BUDGET_S=150 timeout 200 \
    bash tests/gpu/run_tier2.sh --tp $tp --share-device > /tmp/t2.log 2>&1
  row "| tier 2 variants, _ce, TP = $tp | rc=$? | $(grep -E '^total' /tmp/t2.log) |"; cat /tmp/t2.log >> $L
done
timeout 150 build/selftest/kernel_selftest --no-cases --rs-far --only pp128tdq > /tmp/f.log 2>&1
row "| rs-far pp128tdq | rc=$? |"; grep -A6 "pushes over the host link" /tmp/f.log | tail -3 >> $R; cat /tmp/f.log >> $L
cat $R
